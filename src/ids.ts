import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const DIGITS = Buffer.from(ALPHABET, "latin1");
/** Each digit's value, by its character code. */
const VALUES = new Uint8Array(128);
for (let value = 0; value < 32; value++) VALUES[DIGITS[value] as number] = value;
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

// Random bytes drawn 4 KiB at a time: a call into the CSPRNG costs microseconds, and a new
// millisecond (nearly every tool call) would otherwise make one for 16 bytes.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/**
 * Add one to the base32 number whose digits (ALPHABET's character codes) are `digits[from..to)`,
 * in place; false when it overflowed, every digit back to "0".
 */
export function incrementDigits(digits: Uint8Array, from: number, to: number): boolean {
  for (let i = to - 1; i >= from; i--) {
    const value = VALUES[digits[i] as number] as number;
    if (value < 31) {
      digits[i] = DIGITS[value + 1] as number;
      return true;
    }
    digits[i] = DIGITS[0] as number;
  }
  return false;
}

/** The longest prefix an id may have. */
const MAX_PREFIX = 16;
/**
 * The id being made, as bytes: its prefix and "_" written right before its body, which holds the
 * last id's time and random characters, so that one latin1 decode makes the id as one flat string.
 * Built a character at a time, an id was 28 string concatenations, each a new string, and a string
 * made of pieces is copied whole again when SQLite binds it or JSON writes it (BENCHMARKS.md).
 */
const id = Buffer.alloc(MAX_PREFIX + 1 + TIME_CHARS + RANDOM_CHARS);
const BODY_AT = MAX_PREFIX + 1;
const RANDOM_AT = BODY_AT + TIME_CHARS;

let lastTime = -1;

function writeTime(ms: number): void {
  for (let i = RANDOM_AT - 1; i >= BODY_AT; i--) {
    // not `ms % 32`: a time is no small integer, and V8 takes a double's remainder in a C call
    const rest = Math.floor(ms / 32);
    id[i] = DIGITS[ms - rest * 32] as number;
    ms = rest;
  }
}

function writeRandom(): void {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++)
    id[RANDOM_AT + i] = DIGITS[(pool[poolOffset + i] as number) & 31] as number;
  poolOffset += RANDOM_CHARS;
}

/**
 * A ULID-shaped id: 10 characters of millisecond time, then 16 random ones; ids from one process
 * sort by creation, which is what makes "newest first" paging by id correct: within a millisecond
 * (or when the clock steps back) the random part of the last id is counted up by one.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    writeTime(now);
    writeRandom();
  } else if (!incrementDigits(id, RANDOM_AT, id.length)) {
    writeRandom();
  }
  const start = BODY_AT - 1 - prefix.length;
  id.write(prefix, start, "latin1");
  id[BODY_AT - 1] = 0x5f; // "_"
  return id.toString("latin1", start);
}

/** Whether `value` has the shape of an id `newId(prefix)` makes: anything else names nothing. */
export function isId(prefix: string, value: string): boolean {
  return (
    value.length === prefix.length + 27 &&
    value.startsWith(`${prefix}_`) &&
    ID_BODY.test(value.slice(prefix.length + 1))
  );
}

const ID_BODY = new RegExp(`^[${ALPHABET}]{26}$`);
