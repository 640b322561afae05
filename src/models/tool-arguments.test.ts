import { describe, expect, it } from "vitest";
import { parseArguments } from "./tool-arguments.js";

describe("parseArguments", () => {
  it("parses JSON arguments, and keeps text that is not JSON as it came", () => {
    expect(parseArguments('{"city":"Oslo","days":3}')).toEqual({ city: "Oslo", days: 3 });
    expect(parseArguments('{"city":"Oslo"')).toBe('{"city":"Oslo"');
  });

  it("keeps JSON Brain cannot store as it came: a number past a double, nesting past the limit", () => {
    // parsed, 1e400 is Infinity: stored and sent as null, it would no longer be what the model asked
    expect(parseArguments('{"n":1e400}')).toBe('{"n":1e400}');
    const deep = `${"[".repeat(300)}1${"]".repeat(300)}`;
    expect(parseArguments(`{"a":${deep}}`)).toBe(`{"a":${deep}}`);
  });
});
