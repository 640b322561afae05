import { describe, expect, it } from "vitest";
import { REDACTED, redactSecrets } from "./redact.js";

describe("redactSecrets", () => {
  it("returns the very value when no secret is in it", () => {
    const result = { content: [{ type: "text", text: "fine" }], structured_content: { n: 1, ok: true } };
    expect(redactSecrets(result, ["s3cret", ""])).toBe(result);
  });

  it("replaces every occurrence, in strings, nested values and keys, and leaves the original alone", () => {
    const result = {
      content: [{ type: "text", text: "Bearer s3cret and s3cret again" }],
      structured_content: { s3cret: { list: ["x", "tok-s3cret"], other: "bit_abc" }, n: 2, none: null },
    };
    expect(redactSecrets(result, ["s3cret", "bit_abc"])).toEqual({
      content: [{ type: "text", text: `Bearer ${REDACTED} and ${REDACTED} again` }],
      structured_content: {
        [REDACTED]: { list: ["x", `tok-${REDACTED}`], other: REDACTED },
        n: 2,
        none: null,
      },
    });
    expect(result.content[0]?.text).toBe("Bearer s3cret and s3cret again");
  });
});
