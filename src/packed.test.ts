import { describe, expect, it } from "vitest";
import { packedMap } from "./packed.js";

describe("packedMap", () => {
  it("maps every item in order, with its index, into a new array", () => {
    const items = ["a", "b", "c"];
    const mapped = packedMap(items, (item, index) => `${index}:${item}`);
    expect(mapped).toEqual(["0:a", "1:b", "2:c"]);
    expect(mapped).not.toBe(items);
    expect(items).toEqual(["a", "b", "c"]);
  });

  it("maps nothing to an empty array, calling nothing", () => {
    let called = 0;
    expect(packedMap([], () => called++)).toEqual([]);
    expect(called).toBe(0);
  });

  it("keeps an undefined result in its place, as Array.prototype.map does", () => {
    expect(packedMap([1, 2, 3], (n) => (n === 2 ? undefined : n))).toEqual([1, undefined, 3]);
  });
});
