import { describe, expect, it } from "vitest";
import { Secret } from "../../runtime/secret.js";
import { judgeAnswer, parseRetryAfter, scrubMessage } from "./provider-failure.js";

const answer = (status: number | undefined, type?: string, headers: Record<string, string> = {}) =>
  judgeAnswer({ status, type, message: "why", headers: new Headers(headers) }, 0);

describe("judgeAnswer", () => {
  it.each([
    [429, undefined, "provider_rate_limited", true],
    [529, "overloaded_error", "provider_overloaded", true],
    [500, "api_error", "provider_server_error", true],
    [503, undefined, "provider_server_error", true],
    [409, undefined, "provider_server_error", true],
    [408, undefined, "provider_timeout", true],
    [401, "authentication_error", "provider_auth_failed", false],
    [403, "permission_error", "provider_auth_failed", false],
    [400, "invalid_request_error", "provider_rejected", false],
    [413, "request_too_large", "provider_rejected", false],
    // error events inside a 200 stream carry only a type
    [undefined, "overloaded_error", "provider_overloaded", true],
    [undefined, "server_error", "provider_server_error", true],
    [undefined, "invalid_request_error", "provider_rejected", false],
    [undefined, "something_new", "provider_error", false],
  ])("judges %s %s as %s (retryable: %s)", (status, type, code, retryable) => {
    expect(answer(status, type)).toMatchObject({ code, retryable });
  });

  it("says what the provider said", () => {
    expect(answer(529, "overloaded_error").message).toBe(
      "the model provider answered 529 (overloaded_error): why",
    );
    expect(answer(undefined, "overloaded_error").message).toBe(
      "the model provider answered error event (overloaded_error): why",
    );
  });

  it("knows the context-length errors of both APIs, and of the servers that copy OpenAI's message", () => {
    const judged = (code: string | undefined, message: string, status = 400) =>
      judgeAnswer({ status, type: "invalid_request_error", code, message, headers: undefined }).code;
    expect(judged("context_length_exceeded", "This model's maximum context length is 128000 tokens.")).toBe(
      "context_exceeded",
    );
    expect(judged(undefined, "prompt is too long: 208310 tokens > 200000 maximum")).toBe("context_exceeded");
    expect(
      judged(undefined, "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"),
    ).toBe("context_exceeded");
    expect(
      judged(undefined, "This model's maximum context length is 8192 tokens. However, you requested 9000"),
    ).toBe("context_exceeded");
    expect(judged(undefined, "messages: text content blocks must be non-empty")).toBe("provider_rejected");
    // only a 400 says so: a 500 that mentions it is the server's own failure
    expect(judged(undefined, "prompt is too long", 500)).toBe("provider_server_error");
  });

  it("obeys x-should-retry either way, and keeps the retry-after", () => {
    expect(answer(400, undefined, { "x-should-retry": "true" }).retryable).toBe(true);
    expect(answer(500, undefined, { "x-should-retry": "false" }).retryable).toBe(false);
    expect(answer(429, undefined, { "retry-after": "3" }).retryAfterMs).toBe(3000);
  });
});

describe("parseRetryAfter", () => {
  const parse = (headers: Record<string, string>) =>
    parseRetryAfter(new Headers(headers), Date.UTC(2026, 0, 1));
  it("reads milliseconds, seconds and HTTP dates, and ignores what it cannot read", () => {
    expect(parse({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
    expect(parse({ "retry-after": "1.5" })).toBe(1500);
    expect(parse({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" })).toBe(7000);
    expect(parse({ "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" })).toBe(0);
    expect(parse({ "retry-after": "soon" })).toBeUndefined();
    expect(parse({})).toBeUndefined();
  });
});

describe("scrubMessage", () => {
  it("removes the key, key-like strings, and bounds the length", () => {
    const key = new Secret("abc123-very-secret");
    expect(scrubMessage("bad key abc123-very-secret given", key)).toBe("bad key [redacted] given");
    expect(scrubMessage("Incorrect API key provided: sk-proj-********************wxyz.", undefined)).toBe(
      "Incorrect API key provided: [redacted].",
    );
    expect(scrubMessage("x".repeat(5000), undefined)).toHaveLength(1000);
  });
});
