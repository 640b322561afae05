import { describe, expect, it } from "vitest";
import { incrementDigits, isId, newId } from "./ids.js";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** The milliseconds an id's first ten characters after its prefix say. */
function timeOf(prefix: string, id: string): number {
  let ms = 0;
  for (const char of id.slice(prefix.length + 1, prefix.length + 11)) ms = ms * 32 + ALPHABET.indexOf(char);
  return ms;
}

describe("newId", () => {
  it("makes ids of the prefix's shape, its time the clock's", () => {
    const before = Date.now();
    const id = newId("call");
    const after = Date.now();
    expect(isId("call", id)).toBe(true);
    expect(isId("ses", id)).toBe(false);
    expect(id).toMatch(/^call_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(timeOf("call", id)).toBeGreaterThanOrEqual(before);
    expect(timeOf("call", id)).toBeLessThanOrEqual(after);
  });

  it("makes ids that sort in the order made, many in one millisecond, whatever their prefix", () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => newId(i % 2 === 0 ? "ses" : "call"));
    const bodies = ids.map((id) => id.slice(id.indexOf("_") + 1));
    expect(new Set(bodies).size).toBe(ids.length);
    expect([...bodies].sort()).toEqual(bodies);
    expect(ids.filter((id) => id.startsWith("ses_")).every((id) => isId("ses", id))).toBe(true);
  });
});

describe("incrementDigits", () => {
  const digits = (text: string) => Buffer.from(text, "latin1");

  it("adds one to the digits in range, carrying", () => {
    const number = digits("x0az9");
    expect(incrementDigits(number, 1, 4)).toBe(true);
    expect(number.toString("latin1")).toBe("x0b09");
    const carried = digits("0zz");
    expect(incrementDigits(carried, 0, 3)).toBe(true);
    expect(carried.toString("latin1")).toBe("100");
  });

  it("says when the digits overflowed, leaving them all zero", () => {
    const number = digits("zzz");
    expect(incrementDigits(number, 0, 3)).toBe(false);
    expect(number.toString("latin1")).toBe("000");
  });
});
