import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = (ALPHABET[ms % 32] as string) + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

// Random bytes drawn 4 KiB at a time: a call into the CSPRNG costs microseconds, and a new
// millisecond (nearly every tool call) would otherwise make one for 16 bytes.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomChunk(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += size;
  return pool.subarray(poolOffset - size, poolOffset);
}

let lastTime = -1;
let lastRandom = "";

/** Increment a base32 string by one, so ids made in the same millisecond still sort in order. */
function increment(value: string): string {
  const chars = value.split("");
  for (let i = chars.length - 1; i >= 0; i--) {
    const index = ALPHABET.indexOf(chars[i] as string);
    if (index < 31) {
      chars[i] = ALPHABET[index + 1] as string;
      return chars.join("");
    }
    chars[i] = "0";
  }
  return encodeRandom(randomChunk(16));
}

/**
 * A ULID-shaped id: 10 characters of millisecond time, then 16 random ones; ids from one process
 * sort by creation, which is what makes "newest first" paging by id correct.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = encodeRandom(randomChunk(16));
  }
  return `${prefix}_${encodeTime(lastTime)}${lastRandom}`;
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
