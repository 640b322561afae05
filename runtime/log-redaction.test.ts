import { describe, expect, it } from "vitest";
import { isSecretField, REDACTED, redactSecretFields, UNCHECKED } from "./log-redaction.js";
import { Secret } from "./secret.js";

describe("isSecretField", () => {
  it.each([
    "authorization",
    "Authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "Set-Cookie",
    "x-api-key",
    "X-Api-Key",
    "api_key",
    "apiKey",
    "token",
    "inspection_token",
    "x-subscription-token",
    "sessionToken",
    "x-amz-security-token",
    "secret",
    "client_secret",
    "password",
    "secretAccessKey",
    "private_key",
  ])("holds %s secret", (name) => {
    expect(isSecretField(name)).toBe(true);
  });

  it.each([
    "tokens",
    "max_tokens",
    "token_env",
    "api_key_env",
    "key",
    "session_id",
    "headers",
    "accessKeyId",
  ])("lets %s through", (name) => {
    expect(isSecretField(name)).toBe(false);
  });
});

describe("redactSecretFields", () => {
  it("redacts at any depth, in arrays, and leaves the object it was given as it was", () => {
    const fields = {
      binding: { request: { headers: { Authorization: "Bearer a", accept: "json" } } },
      calls: [{ upstream: [{ config: { headers: { "x-api-key": "b" } } }] }],
      kept: "yes",
    };
    const before = structuredClone(fields);
    expect(redactSecretFields(fields)).toEqual({
      binding: { request: { headers: { Authorization: REDACTED, accept: "json" } } },
      calls: [{ upstream: [{ config: { headers: { "x-api-key": REDACTED } } }] }],
      kept: "yes",
    });
    expect(fields).toEqual(before);
  });

  it("returns the very object when it holds no secret, and shares what needs no copy", () => {
    const fields = { session_id: "ses_1", nested: { deep: [1, 2, { route: "/x" }] } };
    expect(redactSecretFields(fields)).toBe(fields);
    const shared = { big: { a: 1 } };
    const out = redactSecretFields({ shared, token: "t" }) as { shared: unknown };
    expect(out.shared).toBe(shared);
  });

  it("keeps an error an error of its class, with its message, stack and non-enumerable errors", () => {
    class UpstreamError extends Error {
      headers = { "set-cookie": ["sid=c"], "request-id": "req_1" };
    }
    const inner = Object.assign(new Error("inner"), { request: { headers: { cookie: "d" } } });
    const error = new UpstreamError("refused");
    const aggregate = new AggregateError([inner], "all failed");
    const { err, all } = redactSecretFields({ err: error, all: aggregate });
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).not.toBe(error);
    expect(err.message).toBe("refused");
    expect(err.stack).toBe(error.stack);
    expect(err.headers).toEqual({ "set-cookie": REDACTED, "request-id": "req_1" });
    expect(error.headers["set-cookie"]).toEqual(["sid=c"]);
    expect(all).toBeInstanceOf(AggregateError);
    expect(Object.keys(all)).not.toContain("errors");
    expect((all.errors[0] as typeof inner).request.headers.cookie).toBe(REDACTED);
  });

  it("lets what serializes itself do so, Secret included", () => {
    const secret = new Secret("s");
    const when = new Date(0);
    const fields = { key: secret, when, body: Buffer.from("token") };
    expect(redactSecretFields(fields)).toBe(fields);
  });

  it("redacts through an object met twice, and cuts a cycle rather than leading back to the secret", () => {
    const headers = { authorization: "Bearer e" };
    const cyclic: Record<string, unknown> = { token: "f" };
    cyclic.self = cyclic;
    const out = redactSecretFields({ a: { headers }, b: { headers }, cyclic });
    expect(out.a.headers).toEqual({ authorization: REDACTED });
    expect(out.b.headers).toBe(out.a.headers);
    expect(out.cyclic).toEqual({ token: REDACTED, self: "[Circular]" });
  });

  it("logs nothing past its bounds: ten levels down, or the thousand-and-first object", () => {
    let deep: Record<string, unknown> = { token: "g" };
    for (let level = 0; level < 11; level++) deep = { next: deep };
    const tooDeep = JSON.stringify(redactSecretFields({ deep }));
    expect(tooDeep).not.toContain('"g"');
    expect(tooDeep).toContain(UNCHECKED);

    // the array is the first object, its items the next thousand
    const wide = Array.from({ length: 1_000 }, (_, index) => ({ index }));
    const out = redactSecretFields({ wide });
    expect(out.wide[998]).toEqual({ index: 998 });
    expect(out.wide[999]).toBe(UNCHECKED);
  });

  it("logs none of the fields when reading one throws", () => {
    const fields = {
      session_id: "ses_1",
      get broken(): never {
        throw new Error("unreadable");
      },
    };
    expect(redactSecretFields(fields)).toEqual({ fields: UNCHECKED });
  });
});
