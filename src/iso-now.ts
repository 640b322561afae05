const MINUTE_MS = 60_000;
/** The minute the last call fell in, as milliseconds and as the start of its ISO string. */
let minuteStart = Number.NaN;
let minutePrefix = "";

/**
 * The time now as `Date.prototype.toISOString` writes it. That method formats every field through
 * V8's C++ printf, about 7,000 instructions a call, and a turn stamps several events; the date,
 * hour and minute change once a minute, so they are formatted once for the minute and only the
 * seconds and milliseconds each call. JavaScript time has no leap seconds: every minute is 60,000
 * milliseconds.
 */
export function isoNow(now: number = Date.now()): string {
  let sinceMinute = now - minuteStart;
  // written so that the first call, when no minute is kept (NaN), formats one too
  if (!(sinceMinute >= 0 && sinceMinute < MINUTE_MS)) {
    minuteStart = now - (((now % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    // "2026-12-07T15:33:12.345Z" without its "12.345Z": years past 9999 are written longer
    minutePrefix = new Date(minuteStart).toISOString().slice(0, -7);
    sinceMinute = now - minuteStart;
  }
  const seconds = Math.floor(sinceMinute / 1000);
  const millis = sinceMinute - seconds * 1000;
  return `${minutePrefix}${seconds < 10 ? "0" : ""}${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}
