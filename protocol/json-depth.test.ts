import { describe, expect, it } from "vitest";
import { nestedDeeperThan } from "./json-depth.js";

const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("nestedDeeperThan", () => {
  it("counts arrays and objects as levels, scalars as none", () => {
    expect(nestedDeeperThan(1, 0)).toBe(false);
    expect(nestedDeeperThan("text", 0)).toBe(false);
    expect(nestedDeeperThan({}, 1)).toBe(false);
    expect(nestedDeeperThan({ a: [1] }, 1)).toBe(true);
    expect(nestedDeeperThan({ a: [1] }, 2)).toBe(false);
  });

  it("finds the deep branch beside shallow ones", () => {
    expect(nestedDeeperThan({ shallow: 1, list: [{}, { deep: nested(10) }] }, 12)).toBe(true);
    expect(nestedDeeperThan({ shallow: 1, list: [{}, { deep: nested(10) }] }, 13)).toBe(false);
  });

  it("judges a value far deeper than the stack without overflowing", () => {
    const deep = nested(200_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestedDeeperThan(deep, 256)).toBe(true);
  });
});
