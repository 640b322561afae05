import { describe, expect, it } from "vitest";
import { KeptCounts } from "./kept-counts.js";

/** A counter that counts a token per character and remembers what it was asked. */
function countingCounter() {
  const asked: string[] = [];
  const text = (counted: string) => {
    asked.push(counted);
    return counted.length;
  };
  return { asked, text };
}

describe("KeptCounts", () => {
  it("counts a text once while it is kept, whichever string holds it", () => {
    const kept = new KeptCounts(8, 1000);
    const counter = countingCounter();
    expect(kept.count("a".repeat(10), counter.text)).toBe(10);
    expect(kept.count(["a".repeat(5), "a".repeat(5)].join(""), counter.text)).toBe(10);
    expect(counter.asked).toHaveLength(1);
  });

  it("lets the least recently used go past its number of texts", () => {
    const kept = new KeptCounts(2, 1000);
    const counter = countingCounter();
    for (const text of ["first", "second", "first", "third"]) kept.count(text, counter.text);
    expect(kept.size).toBe(2);
    kept.count("first", counter.text);
    kept.count("second", counter.text);
    // "first" was used after "second", so "second" went when "third" came
    expect(counter.asked).toEqual(["first", "second", "third", "second"]);
  });

  it("lets texts go past its characters, and keeps no text longer than them all", () => {
    const kept = new KeptCounts(8, 10);
    const counter = countingCounter();
    for (const text of ["aaaa", "bbbb", "cccc", "d".repeat(11)]) kept.count(text, counter.text);
    expect(kept.size).toBe(2);
    kept.count("d".repeat(11), counter.text);
    kept.count("cccc", counter.text);
    kept.count("aaaa", counter.text);
    expect(counter.asked).toEqual(["aaaa", "bbbb", "cccc", "d".repeat(11), "d".repeat(11), "aaaa"]);
  });
});
