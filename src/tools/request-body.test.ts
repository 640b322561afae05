import { describe, expect, it } from "vitest";
import { requestBody } from "./request-body.js";

const ids = {
  tenantId: "acme.eu-1_x",
  sessionId: "ses_01jf3q8k2m4n5p6r7s8t9v0w1x",
  callId: "call_01jf3q8k2m4n5p6r7s8t9v0w1y",
};

/** What the body must be, byte for byte: JSON.stringify of the protocol's object, in its order. */
function expected(request: Parameters<typeof requestBody>[0]): string {
  const body: Record<string, unknown> = {
    tenant_id: request.tenantId,
    session_id: request.sessionId,
    call_id: request.callId,
    arguments: request.arguments,
  };
  if (request.inspection) {
    body.inspection_token = request.inspection.token;
    body.brain_url = request.inspection.brainUrl;
  }
  return JSON.stringify(body);
}

describe("requestBody", () => {
  it.each([
    ["an object", { text: "hello" }],
    ["text that JSON escapes", { text: 'say "hi"\\n\u0001 ünïcödé 😀', nested: [{ a: null, b: 1.5e-7 }] }],
    ["an array", [1, "two", { three: true }]],
    ["a string kept as the model wrote it", '{"unclosed": '],
    ["a number", 42],
    ["null", null],
    ["nothing", undefined],
  ])("is JSON.stringify's text for arguments that are %s", (_, args) => {
    const request = { ...ids, arguments: args };
    expect(requestBody(request)).toBe(expected(request));
    // with the arguments' text made beforehand, as a model step's call has it
    expect(requestBody({ ...request, argumentsJson: JSON.stringify(args) })).toBe(expected(request));
  });

  it.each([
    ["a quote", 'acme"x'],
    ["a backslash", "acme\\x"],
    ["a control character", "acme\nx"],
    ["a character past ASCII", "acmé"],
  ])("is JSON.stringify's text when an id holds %s", (_, odd) => {
    for (const request of [
      { ...ids, tenantId: odd, arguments: { text: "hi" } },
      { ...ids, sessionId: odd, arguments: { text: "hi" } },
      { ...ids, callId: odd, arguments: { text: "hi" } },
    ]) {
      const body = requestBody(request);
      expect(body).toBe(expected(request));
      expect(JSON.parse(body).arguments).toEqual({ text: "hi" });
    }
  });

  it("carries the inspection token and Brain's URL after the arguments, for a binding that inspects", () => {
    const request = {
      ...ids,
      arguments: { text: "hi" },
      inspection: { token: "bit_secret", brainUrl: "http://127.0.0.1:8080" },
    };
    expect(requestBody(request)).toBe(expected(request));
    expect(Object.keys(JSON.parse(requestBody(request)))).toEqual([
      "tenant_id",
      "session_id",
      "call_id",
      "arguments",
      "inspection_token",
      "brain_url",
    ]);
  });
});
