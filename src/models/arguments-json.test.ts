import { describe, expect, it } from "vitest";
import { argumentsJson } from "./arguments-json.js";

describe("argumentsJson", () => {
  it("is JSON.stringify's text, made once for the same arguments", () => {
    const args = { query: 'a "quoted" word', limit: 3, nested: { list: [1, null, "é"] } };
    const first = argumentsJson(args);
    expect(first).toBe(JSON.stringify(args));
    // made once: the text is kept with the arguments, not made again (nothing changes them)
    args.limit = 4;
    expect(argumentsJson(args)).toBe(first);
    expect(argumentsJson({ ...args })).toBe(JSON.stringify({ ...args }));
  });

  it("writes values that are not objects as JSON.stringify does", () => {
    expect(argumentsJson("raw text")).toBe('"raw text"');
    expect(argumentsJson(7)).toBe("7");
    expect(argumentsJson(null)).toBe("null");
    expect(argumentsJson(undefined)).toBeUndefined();
  });
});
