import { describe, expect, it } from "vitest";
import { unstorable } from "./storable-json.js";

const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("unstorable", () => {
  it("counts arrays and objects as levels, scalars as none", () => {
    expect(unstorable(1, 0)).toBeUndefined();
    expect(unstorable("text", 0)).toBeUndefined();
    expect(unstorable({}, 1)).toBeUndefined();
    expect(unstorable({ a: [1] }, 1)).toBe("nests deeper than 1 levels");
    expect(unstorable({ a: [1] }, 2)).toBeUndefined();
  });

  it("finds the deep branch beside shallow ones", () => {
    expect(unstorable({ shallow: 1, list: [{}, { deep: nested(10) }] }, 12)).toMatch(/deeper/);
    expect(unstorable({ shallow: 1, list: [{}, { deep: nested(10) }] }, 13)).toBeUndefined();
  });

  it("judges a value far deeper than the stack without overflowing", () => {
    const deep = nested(200_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(unstorable(deep, 256)).toMatch(/deeper than 256/);
  });

  it("finds a number JSON.parse made Infinity, wherever it is, and takes every finite one", () => {
    for (const text of ["1e400", "[1, -1e400]", '{"a": {"b": [0, 1e309]}}'])
      expect(unstorable(JSON.parse(text)), text).toMatch(/Infinity/);
    expect(unstorable(JSON.parse('{"a": [1.7976931348623157e308, -5e-324, 0]}'))).toBeUndefined();
  });
});
