import { Writable } from "node:stream";
import { AuthenticationError } from "@anthropic-ai/sdk";
import { errors } from "undici";
import { describe, expect, it } from "vitest";
import { Secret } from "../../runtime/secret.js";
import { createLogger } from "./logger.js";

/** A real logger writing to memory, flushed: every line it wrote. */
function logged(write: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  const logger = createLogger("debug", destination);
  write(logger);
  logger.flush();
  return chunks.join("");
}

describe("Brain's logger", () => {
  it("redacts every field that carries a secret, at the top and one level down", () => {
    const secrets = Array.from({ length: 16 }, (_, index) => `secret-value-${index}-x9`);
    const text = logged((logger) => {
      logger.warn(
        {
          authorization: `Bearer ${secrets[0]}`,
          headers: {
            authorization: `Bearer ${secrets[1]}`,
            cookie: secrets[2],
            "x-api-key": secrets[3],
            "proxy-authorization": secrets[4],
          },
          inspection_token: secrets[5],
          token: secrets[6],
          api_key: secrets[7],
          password: secrets[8],
          secret: secrets[9],
          request: {
            authorization: secrets[10],
            headers: { authorization: secrets[11], cookie: secrets[12] },
            token: secrets[13],
            password: secrets[14],
          },
          key: new Secret(secrets[15] as string),
        },
        "a line with every secret Brain holds",
      );
    });
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).toContain("[redacted]");
    expect(JSON.parse(text).headers).toEqual({
      authorization: "[redacted]",
      cookie: "[redacted]",
      "x-api-key": "[redacted]",
      "proxy-authorization": "[redacted]",
    });
  });

  it("redacts secret fields at any depth, in any case, and in arrays", () => {
    const secrets = Array.from({ length: 8 }, (_, index) => `deep-secret-${index}-q7`);
    const text = logged((logger) => {
      logger.child({ trace_id: "t1" }).info(
        {
          upstream: { headers: { authorization: `Bearer ${secrets[0]}` } },
          binding: { request: { headers: { Authorization: `Bearer ${secrets[1]}`, accept: "json" } } },
          attempts: [{ response: { headers: { "set-cookie": [`sid=${secrets[2]}`, `cf=${secrets[3]}`] } } }],
          provider: { body: { api_key: secrets[4] }, credentials: { secretAccessKey: secrets[5] } },
          a: { b: { c: { d: { headers: { cookie: secrets[6], "X-Api-Key": secrets[7] } } } } },
        },
        "deep",
      );
    });
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toMatchObject({
      upstream: { headers: { authorization: "[redacted]" } },
      binding: { request: { headers: { Authorization: "[redacted]", accept: "json" } } },
      attempts: [{ response: { headers: { "set-cookie": "[redacted]" } } }],
    });
  });

  it("redacts what errors from undici and the SDKs carry of their requests and answers, keeping the error", () => {
    const secrets = Array.from({ length: 7 }, (_, index) => `err-secret-${index}-k3`);
    // undici's own class, with the answer's headers as a plain record
    const answerHeaders = { "set-cookie": `session=${secrets[0]}`, "request-id": "req_7" };
    const refused = new errors.ResponseError("upstream refused", 401, {
      headers: answerHeaders,
      body: { error: "bad token" },
    });
    // an HTTP client's error shape (axios and its kin): the request it sent, and the answer
    const client = Object.assign(new Error("Request failed with status code 403"), {
      config: { headers: { Authorization: `Bearer ${secrets[1]}` }, data: { token: secrets[2] } },
      request: { headers: { "x-api-key": secrets[3] } },
      response: { status: 403, headers: { "Set-Cookie": [`a=${secrets[4]}`] } },
    });
    // an SDK's error: its headers are a Headers object, which serializes as {}
    const sdk = new AuthenticationError(
      401,
      undefined,
      "invalid x-api-key",
      new Headers({ "set-cookie": secrets[5] as string }),
    );
    // what fetch throws when every address failed: an AggregateError whose errors pino logs each
    const everyAddress = new AggregateError(
      [Object.assign(new Error("connect ECONNREFUSED"), { request: { headers: { cookie: secrets[6] } } })],
      "fetch failed",
    );
    const lines = logged((logger) => {
      logger.warn({ err: refused }, "tool call failed");
      logger.error(client);
      logger.warn({ session_id: "ses_1", err: sdk }, "model call failed");
      logger.warn({ err: everyAddress, retry: { cause: client } }, "could not connect");
    });
    for (const secret of secrets) expect(lines).not.toContain(secret);
    const [first, second] = lines
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(first.err).toMatchObject({
      type: "ResponseError",
      message: "upstream refused",
      statusCode: 401,
      headers: { "set-cookie": "[redacted]", "request-id": "req_7" },
    });
    expect(second).toMatchObject({
      msg: "Request failed with status code 403",
      err: {
        type: "Error",
        config: { headers: { Authorization: "[redacted]" }, data: { token: "[redacted]" } },
      },
    });
    // the logged error is left as it was: what was redacted is a copy
    expect(answerHeaders["set-cookie"]).toBe(`session=${secrets[0]}`);
  });

  it("redacts a child logger's bindings, and keeps its ids", () => {
    const text = logged((logger) =>
      logger
        .child({ trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", api_key: "child-secret-x9" })
        .info({ nested: { Authorization: "Bearer line-secret-x9" } }, "from a child"),
    );
    expect(text).not.toContain("child-secret-x9");
    expect(text).not.toContain("line-secret-x9");
    expect(JSON.parse(text)).toMatchObject({
      trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
      api_key: "[redacted]",
      service: "brain",
      msg: "from a child",
    });
  });

  it("keeps what is no secret", () => {
    const text = logged((logger) => logger.info({ session_id: "ses_1", route: "/sessions/{id}" }, "kept"));
    expect(JSON.parse(text)).toMatchObject({ session_id: "ses_1", route: "/sessions/{id}", msg: "kept" });
  });
});
