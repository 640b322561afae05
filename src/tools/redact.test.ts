import { describe, expect, it } from "vitest";
import { REDACTED, redactedStart, redactResult, redactSecrets } from "./redact.js";

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

describe("redactResult", () => {
  it("returns the very result when no secret is in it", () => {
    const result = { is_error: false, content: [{ type: "text" as const, text: "fine" }] };
    expect(redactResult(result, ["s3cret"])).toBe(result);
  });

  it("leaves the protocol's names alone when a secret is in them, so the result keeps its shape", () => {
    // a short token is in the names of the result, of its items and of their type
    const result = {
      is_error: true,
      content: [
        { type: "text" as const, text: "the text" },
        { type: "resource_link" as const, uri: "file:///text", name: "text" },
      ],
      structured_content: { text: ["text", 1] },
      error: { code: "context_exceeded", message: "too much text" },
    };
    expect(redactResult(result, ["text"])).toEqual({
      is_error: true,
      content: [
        { type: "text", text: `the ${REDACTED}` },
        { type: "resource_link", uri: `file:///${REDACTED}`, name: REDACTED },
      ],
      structured_content: { [REDACTED]: [REDACTED, 1] },
      error: { code: "context_exceeded", message: `too much ${REDACTED}` },
    });
    expect(result.content[0]?.text).toBe("the text");
  });
});

describe("redactedStart", () => {
  const token = "tok_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e";
  const inspection = "bit_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5";
  /** Whether any 8-character run of the secret is in the text. */
  const leaks = (text: string, secret: string) =>
    Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8)).some((run) =>
      text.includes(run),
    );

  it("leaves no 8-character run of a secret placed across the cut at any offset", () => {
    for (const secret of [token, inspection]) {
      for (let offset = 0; offset <= 64; offset++) {
        const text = `${"x".repeat(64 - offset)}${secret}${"y".repeat(100)}`;
        for (const complete of [true, false]) {
          const start = redactedStart(text, 64, [token, inspection], complete);
          expect(start.length).toBeLessThanOrEqual(64);
          expect(leaks(start, secret), `offset ${offset}: ${start}`).toBe(false);
        }
      }
    }
  });

  it("drops the beginning of a secret where the text read so far ends", () => {
    const text = `error: ${token.slice(0, 20)}`;
    expect(redactedStart(text, 512, [token], false)).toBe("error: ");
    // all there was: a fragment of the token that is not the token is the service's own text
    expect(redactedStart(text, 512, [token], true)).toBe(text);
  });

  it("redacts before cutting, so earlier secrets do not pull a later one's start into view", () => {
    const text = `${token} ${token} ${token}`;
    expect(redactedStart(text, 40, [token], true)).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
  });
});
