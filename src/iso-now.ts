const SECOND_MS = 1000;
/** "000Z" to "999Z": the end of an ISO time, the only part of it that changes within a second. */
const MILLIS = Array.from({ length: SECOND_MS }, (_, ms) => `${String(ms).padStart(3, "0")}Z`);
/** The second the last call fell in, as milliseconds and as the start of its ISO string. */
let secondStart = Number.NaN;
let secondPrefix = "";

/**
 * The time now as `Date.prototype.toISOString` writes it. That method formats every field through
 * V8's C++ printf, about 7,000 instructions a call, and a turn stamps several events; all but the
 * milliseconds change once a second, so they are formatted once for the second, and the time is
 * that and one of a thousand endings: one concatenation a call, where formatting the seconds and
 * milliseconds each call made five, and a string of five pieces to copy whole when SQLite binds it
 * (BENCHMARKS.md). JavaScript time has no leap seconds: every second is 1,000 milliseconds.
 */
export function isoNow(now: number = Date.now()): string {
  let sinceSecond = now - secondStart;
  // written so that the first call, when no second is kept (NaN), formats one too
  if (!(sinceSecond >= 0 && sinceSecond < SECOND_MS)) {
    secondStart = now - (((now % SECOND_MS) + SECOND_MS) % SECOND_MS);
    // "2026-12-07T15:33:12.345Z" without its "345Z": years past 9999 are written longer
    secondPrefix = new Date(secondStart).toISOString().slice(0, -4);
    sinceSecond = now - secondStart;
  }
  return secondPrefix + (MILLIS[sinceSecond] as string);
}
