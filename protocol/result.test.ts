import { describe, expect, it } from "vitest";
import { checkResultObject } from "./result.js";

const problemOf = (raw: unknown) => {
  const checked = checkResultObject(raw, undefined);
  return "problem" in checked ? checked.problem : undefined;
};

describe("a result's content items", () => {
  it("are judged by the kind their type names, and only by it", () => {
    expect(problemOf({ content: [{ type: "text" }] })).toBe(
      "the result object is invalid: result.content[0].text: is required",
    );
    expect(problemOf({ content: [{ type: "text", text: "a", extra: 1 }] })).toBe(
      "the result object is invalid: result.content[0].extra: unknown field",
    );
    expect(problemOf({ content: [{ type: "image", data: "aGk=" }] })).toBe(
      "the result object is invalid: result.content[0].mime_type: is required",
    );
  });

  it("name the kinds there are when the type is missing or none of them", () => {
    const kinds = 'must be one of "text", "image", "audio", "resource_link"';
    for (const item of [{ type: "video" }, { text: "x" }, { type: 5 }]) {
      expect(problemOf({ content: [item] })).toBe(
        `the result object is invalid: result.content[0].type: ${kinds}`,
      );
    }
    expect(problemOf({ content: ["x"] })).toBe(
      "the result object is invalid: result.content[0]: must be object",
    );
  });

  it("of every kind pass as sent", () => {
    const content = [
      { type: "text", text: "a" },
      { type: "image", data: "aGk=", mime_type: "image/png" },
      { type: "audio", data: "aGk=", mime_type: "audio/wav" },
      { type: "resource_link", uri: "file:///a", name: "a", mime_type: "text/plain", description: "d" },
    ];
    expect(checkResultObject({ content }, undefined)).toEqual({ is_error: false, content });
  });
});
