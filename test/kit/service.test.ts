import { once } from "node:events";
import { connect } from "node:net";
import { Type } from "@sinclair/typebox";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerAuth, defineTool, ToolError, tokenFromEnv } from "../../kit/index.js";
import { exchangeRaw, rawJsonBody } from "../helpers/raw-http.js";
import { envelope, type KitService, parseEventStream, postCall, startKitService } from "./kit-service.js";

const strict = { additionalProperties: false } as const;

let gate: () => void = () => {};
const signals: Record<string, Promise<unknown>> = {};
/** What `late_progress`'s progress after its result threw, or undefined. */
let lateProgress: Promise<unknown> = Promise.resolve();

const tools = [
  defineTool({
    name: "echo",
    description: "Echo text.",
    input: Type.Object({ text: Type.String({ maxLength: 16 }) }, strict),
    handler: ({ text }, ctx) => ({
      content: [{ type: "text", text }],
      structured_content: { tenant: ctx.tenant_id, session: ctx.session_id, call: ctx.call_id },
    }),
  }),
  defineTool({
    name: "fail",
    description: "Always throws.",
    input: Type.Object({ kind: Type.String() }),
    handler: ({ kind }) => {
      if (kind === "tool-error") throw new ToolError("quota exceeded", { retry_after: 3 });
      throw new Error("the disk is on fire");
    },
  }),
  defineTool({
    name: "bad_return",
    description: "Returns what the protocol forbids.",
    input: Type.Object({}),
    handler: () => ({ content: [{ type: "video", url: "x" }] }) as never,
  }),
  defineTool({
    name: "typed_output",
    description: "Checks its own output.",
    input: Type.Object({ n: Type.Integer() }),
    output: Type.Object({ doubled: Type.Integer() }, strict),
    handler: ({ n }) => ({ structured_content: { doubled: n === 0 ? ("zero" as never) : n * 2 } }),
  }),
  defineTool({
    name: "slow",
    description: "Streams until the test opens the gate.",
    input: Type.Object({}),
    streaming: true,
    handler: async (_args, ctx) => {
      ctx.progress({ step: 1 });
      await new Promise<void>((resolve) => {
        gate = resolve;
      });
      ctx.progress({ step: 2 });
      return "done";
    },
  }),
  defineTool({
    name: "upgrades",
    description: "Not streaming, but reports progress.",
    input: Type.Object({}),
    handler: (_args, ctx) => {
      ctx.progress({ status: "halfway" });
      return "finished";
    },
  }),
  defineTool({
    name: "hang",
    description: "Waits for its signal.",
    input: Type.Object({ key: Type.String() }),
    handler: ({ key }, ctx) => {
      signals[key] = new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(ctx.signal.reason)),
      );
      return new Promise<string>((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))),
      );
    },
  }),
  defineTool({
    name: "hang_stream",
    description: "Streams and waits for its signal.",
    input: Type.Object({ key: Type.String() }),
    streaming: true,
    handler: ({ key }, ctx) => {
      signals[key] = new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(ctx.signal.reason)),
      );
      return new Promise<string>((resolve) => ctx.signal.addEventListener("abort", () => resolve("stopped")));
    },
  }),
  defineTool({
    name: "late_progress",
    description: "Reports progress after its result.",
    input: Type.Object({}),
    handler: (_args, ctx) => {
      lateProgress = new Promise((resolve) =>
        setTimeout(() => {
          // caught only to be seen here: in a service, this timer's throw ends the process
          try {
            ctx.progress({ late: true });
            resolve(undefined);
          } catch (error) {
            resolve(error);
          }
        }, 20),
      );
      return "done";
    },
  }),
  defineTool({
    name: "big_progress",
    description: "Sends progress over the cap.",
    input: Type.Object({}),
    handler: (_args, ctx) => {
      ctx.progress({ blob: "x".repeat(2000) });
      return "unreachable";
    },
  }),
];

let service: KitService;
const at = (name: string) => `${service.url}/tools/${name}`;

beforeAll(async () => {
  service = await startKitService({ tools, keepAliveMs: 20, maxProgressBytes: 1024, maxBodyBytes: 4096 });
});
afterAll(() => service.close());

describe("auth", () => {
  it("answers 401 with WWW-Authenticate without a token, with a wrong one, and with another scheme", async () => {
    for (const headers of [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Basic ${service.token}` },
    ]) {
      const response = await request(at("echo"), {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(envelope({ text: "hi" })),
      });
      expect(response.statusCode).toBe(401);
      expect(response.headers["www-authenticate"]).toBe("Bearer");
      expect((await response.body.json()) as object).toEqual({
        error: { code: "unauthorized", message: "no or wrong bearer token" },
      });
    }
  });

  it("checks the token before saying whether a tool exists", async () => {
    expect((await postCall(at("nope"), envelope({}))).status).toBe(401);
    expect((await postCall(at("nope"), envelope({}), { token: service.token })).status).toBe(404);
  });
});

describe("JSON results", () => {
  it("passes typed arguments and the call's identity to the handler", async () => {
    const body = envelope({ text: "hello" });
    const response = await postCall(at("echo"), body, { token: service.token });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json");
    expect(response.json()).toEqual({
      content: [{ type: "text", text: "hello" }],
      structured_content: { tenant: "acme", session: "ses_test", call: body.call_id },
    });
  });

  it("turns a thrown error into an is_error result with its message", async () => {
    const plain = await postCall(at("fail"), envelope({ kind: "plain" }), { token: service.token });
    expect(plain.json()).toEqual({
      is_error: true,
      content: [{ type: "text", text: "fail failed: the disk is on fire" }],
    });
    const chosen = await postCall(at("fail"), envelope({ kind: "tool-error" }), { token: service.token });
    expect(chosen.json()).toEqual({
      is_error: true,
      content: [{ type: "text", text: "quota exceeded" }],
      structured_content: { retry_after: 3 },
    });
  });

  it("answers arguments that break the input schema with an error result naming the field", async () => {
    const response = await postCall(at("echo"), envelope({ text: "far too long for sixteen" }), {
      token: service.token,
    });
    expect(response.status).toBe(200);
    const result = response.json();
    expect(result.is_error).toBe(true);
    expect(result.content[0].text).toMatch(/invalid arguments for echo: arguments\.text: .*16/);
  });

  it("turns a return that breaks the protocol into an error result, and logs it", async () => {
    const bad = (await postCall(at("bad_return"), envelope({}), { token: service.token })).json();
    expect(bad.is_error).toBe(true);
    expect(bad.content[0].text).toMatch(/bad_return returned a result that breaks the tool protocol/);
    const typed = (await postCall(at("typed_output"), envelope({ n: 0 }), { token: service.token })).json();
    expect(typed.content[0].text).toMatch(/structured_content does not match output_schema/);
    const good = (await postCall(at("typed_output"), envelope({ n: 4 }), { token: service.token })).json();
    expect(good).toEqual({ structured_content: { doubled: 8 } });
    expect(service.logs()).toMatch(/the handler returned an invalid result/);
  });
});

describe("bad requests", () => {
  const cases: [string, string | object, string | undefined, number, string, RegExp][] = [
    ["not JSON", "{nope", undefined, 400, "invalid_request", /not valid JSON/],
    ["a wrong content type", "{}", "text/plain", 415, "unsupported_media_type", /application\/json/],
    [
      "no call_id",
      { tenant_id: "a", session_id: "s", arguments: {} },
      undefined,
      400,
      "invalid_request",
      /call_id/,
    ],
    [
      "arguments not an object",
      { ...envelope({}), arguments: [1] },
      undefined,
      400,
      "invalid_request",
      /arguments/,
    ],
    [
      "half an inspection grant",
      envelope({}, { brain_url: "http://x" }),
      undefined,
      400,
      "invalid_request",
      /inspection_token/,
    ],
    [
      "a body over the cap",
      envelope({ text: "x".repeat(5000) }),
      undefined,
      413,
      "payload_too_large",
      /4096/,
    ],
  ];
  it.each(cases)("answers %s with a clear error", async (_name, body, contentType, status, code, message) => {
    const response = await postCall(at("echo"), body, {
      token: service.token,
      ...(contentType && { contentType }),
    });
    expect(response.status).toBe(status);
    expect(response.json().error.code).toBe(code);
    expect(response.json().error.message).toMatch(message);
  });

  it("answers a tool path with a broken percent-escape 404, as any tool it does not have", async () => {
    const response = await postCall(at("ech%E0%A4%A"), envelope({ text: "x" }), { token: service.token });
    expect(response.status).toBe(404);
    expect(response.json().error.code).toBe("not_found");
    // and a valid escape still names the tool
    const escaped = await postCall(at("ech%6F"), envelope({ text: "x" }), { token: service.token });
    expect(escaped.status).toBe(200);
  });

  it.each([
    ["no Host header", "GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n", 400, "invalid_request"],
    [
      "a request target that is no URL",
      "GET http://[bad/tools/echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      400,
      "invalid_request",
    ],
    [
      "an expectation other than 100-continue",
      "GET /healthz HTTP/1.1\r\nhost: x\r\nexpect: tea\r\nconnection: close\r\n\r\n",
      400,
      "invalid_request",
    ],
    ["CONNECT", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1:22\r\n\r\n", 405, "method_not_allowed"],
    ["malformed HTTP", "GET /healthz HTTP/1.1\r\nhost x\r\n\r\n", 400, "invalid_request"],
  ])("answers %s with a JSON error, logging no failure", async (_, text, status, code) => {
    const reply = await exchangeRaw(service.url, text);
    expect(reply).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(rawJsonBody(reply).error.code).toBe(code);
    expect(service.logs()).not.toContain("request failed");
  });

  it("logs a caller that leaves mid-body at debug, not as a failure", async () => {
    const { hostname, port } = new URL(service.url);
    const arrived = once(service.server, "request");
    const socket = connect(Number(port), hostname);
    socket.write(
      `POST /tools/echo HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${service.token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"call_id":`,
    );
    await arrived;
    socket.destroy();
    await expect.poll(() => service.logs()).toContain("client left mid-request");
    expect(service.logs()).not.toContain("request failed");
  });

  it("answers GET on a tool with 405 and lists the tools at the base path", async () => {
    const get = await request(at("echo"), { headers: { authorization: `Bearer ${service.token}` } });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe("POST");
    await get.body.dump();
    const manifest = await request(`${service.url}/tools`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    const { tools: listed } = (await manifest.body.json()) as {
      tools: { name: string; input_schema: object }[];
    };
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    expect(listed[0]?.input_schema).toEqual({
      type: "object",
      properties: { text: { type: "string", maxLength: 16 } },
      required: ["text"],
      additionalProperties: false,
    });
  });
});

describe("event streams", () => {
  it("sends headers at once, then progress and keep-alive comments, then one result", async () => {
    const response = await request(at("slow"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${service.token}` },
      body: JSON.stringify(envelope({})),
    });
    // the headers arrived while the handler is still waiting on the gate
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    await new Promise((resolve) => setTimeout(resolve, 80));
    gate();
    const events = parseEventStream(await response.body.text());
    expect(events.filter((e) => "event" in e)).toEqual([
      { event: "progress", data: { step: 1 } },
      { event: "progress", data: { step: 2 } },
      { event: "result", data: { content: [{ type: "text", text: "done" }] } },
    ]);
    expect(events.filter((e) => "comment" in e).length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toEqual({ event: "result", data: { content: [{ type: "text", text: "done" }] } });
  });

  it("switches a JSON tool to an event stream on its first progress", async () => {
    const response = await postCall(at("upgrades"), envelope({}), { token: service.token });
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(parseEventStream(response.text)).toEqual([
      { event: "progress", data: { status: "halfway" } },
      { event: "result", data: { content: [{ type: "text", text: "finished" }] } },
    ]);
  });

  it("drops progress sent after a JSON result, and answers the next call", async () => {
    const answer = await postCall(at("late_progress"), envelope({}), { token: service.token });
    expect(answer.json()).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(await lateProgress).toBeUndefined();
    const next = await postCall(at("echo"), envelope({ text: "still here" }), { token: service.token });
    expect(next.json().content).toEqual([{ type: "text", text: "still here" }]);
  });

  it("refuses a progress payload over the cap with an error result instead of breaking the call", async () => {
    const result = (await postCall(at("big_progress"), envelope({}), { token: service.token })).json();
    expect(result).toEqual({
      is_error: true,
      content: [{ type: "text", text: "big_progress failed: progress data exceeds 1024 bytes" }],
    });
  });
});

describe("the abort signal", () => {
  it.each(["hang", "hang_stream"])("fires when the caller closes the connection (%s)", async (name) => {
    const key = `${name}-${Date.now()}`;
    const caller = new AbortController();
    const call = postCall(at(name), envelope({ key }), { token: service.token, signal: caller.signal });
    await expect.poll(() => key in signals).toBe(true);
    caller.abort();
    await expect(call).rejects.toThrow();
    const reason = await signals[key];
    expect(String(reason)).toMatch(/the caller closed the connection/);
    await expect.poll(() => service.logs()).toMatch(/the caller went away before the result/);
  });

  it("fires for every call when the service closes, and close() waits for the handlers", async () => {
    const own = await startKitService({ tools, closeGraceMs: 2000 });
    const key = `close-${Date.now()}`;
    const call = postCall(`${own.url}/tools/hang_stream`, envelope({ key }), { token: own.token });
    await expect.poll(() => key in signals).toBe(true);
    await own.close();
    expect(String(await signals[key])).toMatch(/the tool service is stopping/);
    const events = parseEventStream((await call).text);
    expect(events.at(-1)).toEqual({
      event: "result",
      data: { content: [{ type: "text", text: "stopped" }] },
    });
  });
});

it("never logs the token", async () => {
  await postCall(at("echo"), envelope({ text: "x" }), { token: service.token });
  expect(service.logs()).toContain("tool call answered");
  expect(service.logs()).not.toContain(service.token);
});

it("answers /healthz without a token and names the variable tokenFromEnv needs", async () => {
  const health = await request(`${service.url}/healthz`);
  expect(health.statusCode).toBe(200);
  expect(await health.body.json()).toEqual({ status: "ok" });
  expect(() => tokenFromEnv("MY_TOOLS_KEY", {})).toThrow(/set the environment variable MY_TOOLS_KEY/);
  expect(tokenFromEnv("MY_TOOLS_KEY", { MY_TOOLS_KEY: "v" })).toBe("v");
  expect(() => tokenFromEnv("MY_TOOLS_KEY", { MY_TOOLS_KEY: "v\n" })).toThrow(
    /^environment variable MY_TOOLS_KEY holds a newline at its end;/,
  );
  // a service given such a token directly refuses to start rather than answer every call 401
  expect(() => bearerAuth(" v")).toThrow(/^the bearer token holds a space at its start;/);
});
