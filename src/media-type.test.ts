import { describe, expect, it } from "vitest";
import { mediaTypeOf } from "./media-type.js";

describe("mediaTypeOf", () => {
  it("cuts the parameters off and trims, keeping the case as sent", () => {
    expect(mediaTypeOf("application/json")).toBe("application/json");
    expect(mediaTypeOf(" Text/HTML ; charset=utf-8; q=1")).toBe("Text/HTML");
    expect(mediaTypeOf(";charset=utf-8")).toBe("");
    expect(mediaTypeOf("")).toBe("");
    expect(mediaTypeOf(undefined)).toBe("");
  });
});
