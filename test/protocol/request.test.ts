import { request as httpRequest } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient, SessionEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { type ForwardProxy, startForwardProxy } from "../helpers/proxy.js";
import {
  type ReceivedCall,
  sendJson,
  startToolService,
  type ToolService,
  textResult,
} from "../helpers/tool-service.js";
import { assertGapless, runTurn, waitForEvents } from "../helpers/turns.js";

const TOOL_TOKEN = "tool-token-9f8e7d6c5b4a";
/** A token an operator might pick, which is also a word of the protocol's result object. */
const SHORT_TOKEN = "text";
let service: ToolService;
let brain: TestBrain;
let client: BrainClient;

/** What the /inspect route saw, using the inspection token while the call was out. */
interface InspectionReport {
  token: string;
  brainUrl: string;
  session: number;
  events: number;
  sawOwnCall: boolean;
  otherSession: number;
  postMessage: number;
  catalog: number;
  stream: AsyncIterator<Uint8Array>;
}
const inspections: InspectionReport[] = [];
let otherSessionId = "";
/** The /held route answers once the test releases it. */
const held = (() => {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { released, release };
})();

beforeAll(async () => {
  service = await startToolService({
    "/echo": (call, res) => sendJson(res, textResult(JSON.stringify(call.body.arguments))),
    "/hang": () => {},
    "/held": async (_, res) => {
      await held.released;
      sendJson(res, textResult("held, then answered"));
    },
    // a careless service: it hands back what it was sent, secrets included
    "/echo-request": (call, res) =>
      sendJson(res, {
        content: [{ type: "text", text: `${call.headers.authorization} ${JSON.stringify(call.body)}` }],
        structured_content: {
          [String(call.body.inspection_token)]: call.body,
          auth: call.headers.authorization,
        },
      }),
    // echoes the token or the inspection token placed at an offset, so that it straddles the cut
    // of what Brain quotes: an error body's snippet, an unknown event's name, a content type
    "/refuse-at": (call, res) => {
      const { offset, secret, where } = call.body.arguments as {
        offset: number;
        secret: "bearer" | "inspection";
        where?: "event" | "type";
      };
      const token =
        secret === "bearer"
          ? String(call.headers.authorization).slice("Bearer ".length)
          : String(call.body.inspection_token);
      const placed = `${"x".repeat(offset)}${token}`;
      if (where === "event") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`event: ${placed}\ndata: 1\n\n`);
      } else if (where === "type") {
        res.writeHead(200, { "content-type": `text/${placed}` });
        res.end("{}");
      } else {
        res.writeHead(403, { "content-type": "text/plain" });
        res.end(`${placed}${"y".repeat(600)}`);
      }
    },
    "/progress-echo": async (call, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const auth = String(call.headers.authorization);
      const token = String(call.body.inspection_token);
      res.write(
        `event: progress\ndata: ${JSON.stringify({ [token]: auth, said: `${auth} and ${token}` })}\n\n`,
      );
      res.write(`event: progress\ndata: ${JSON.stringify(`${token}${auth}`)}\n\n`);
      res.end('event: result\ndata: {"content":[{"type":"text","text":"done"}]}\n\n');
    },
    "/refuse-echoing": (call, res) => {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(`bad request from ${call.headers.authorization}`);
    },
    "/progress": async (_, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 1; i <= 3; i++) {
        res.write(`event: progress\ndata: {"step":${i}}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      res.end('event: result\ndata: {"content":[{"type":"text","text":"done"}]}\n\n');
    },
    "/result-then-garbage": (_, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: result\ndata: {"content":[{"type":"text","text":"first"}]}\n\n');
      const timer = setInterval(() => res.write("event: garbage\ndata: {}\n\n"), 20);
      res.on("close", () => clearInterval(timer));
    },
    "/inspect": async (call, res) => {
      const token = String(call.body.inspection_token);
      const brainUrl = String(call.body.brain_url);
      const get = async (path: string, method: "GET" | "POST" = "GET", body?: string) => {
        const response = await httpRequest(`${brainUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body && { "content-type": "application/json" }) },
          body,
        });
        const text = await response.body.text();
        return { status: response.statusCode, text };
      };
      const sessionId = String(call.body.session_id);
      const events = await get(`/sessions/${sessionId}/events`);
      const stream = await httpRequest(`${brainUrl}/sessions/${sessionId}/events`, {
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
      });
      const iterator = stream.body[Symbol.asyncIterator]();
      await iterator.next();
      inspections.push({
        token,
        brainUrl,
        session: (await get(`/sessions/${sessionId}`)).status,
        events: events.status,
        sawOwnCall: events.text.includes(String(call.body.call_id)),
        otherSession: (await get(`/sessions/${otherSessionId}`)).status,
        postMessage: (await get(`/sessions/${sessionId}/messages`, "POST", '{"content":"hi"}')).status,
        catalog: (await get("/catalog")).status,
        stream: iterator,
      });
      sendJson(res, textResult("inspected"));
    },
  });
  const binding = (name: string, path: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: service.at(path),
    tenants: ["acme"],
    ...extra,
  });
  brain = await startBrain(
    {
      tools: [
        binding("echo", "/echo"),
        binding("echo_with_token", "/echo", { token_env: "TOOL_TOKEN" }),
        binding("echo_with_short_token", "/echo", { token_env: "SHORT_TOKEN" }),
        binding("echo_with_query", "/echo?region=eu&v=2"),
        binding("hang", "/hang"),
        binding("held", "/held"),
        binding("progress", "/progress"),
        binding("result_then_garbage", "/result-then-garbage"),
        binding("inspect", "/inspect", { inspect_session: true }),
        binding("echo_request", "/echo-request", { inspect_session: true, token_env: "TOOL_TOKEN" }),
        binding("refuse_echoing", "/refuse-echoing", { token_env: "TOOL_TOKEN" }),
        binding("refuse_at", "/refuse-at", { inspect_session: true, token_env: "TOOL_TOKEN" }),
        binding("progress_echo", "/progress-echo", { inspect_session: true, token_env: "TOOL_TOKEN" }),
      ],
    },
    { env: { TOOL_TOKEN, SHORT_TOKEN } },
  );
  client = brain.client();
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

const oneCall = (tool: string, args: Record<string, unknown> = {}) => ({
  tools: [tool],
  script: [{ tool_calls: [{ name: tool, arguments: args }] }, { text: "after" }],
});

function lastCall(path: string): ReceivedCall {
  const call = service.calls.filter((c) => c.path === path).at(-1);
  if (!call) throw new Error(`no call to ${path}`);
  return call;
}

describe("the request", () => {
  it("has exactly the headers and body of the protocol, with the token when token_env is set", async () => {
    const session = await client.createSession(oneCall("echo_with_token", { text: "hi" }));
    const events = await runTurn(client, session.id, "go");
    const call = lastCall("/echo");
    const callId = events.find((e) => e.type === "tool.call")?.data.call_id;
    expect(call.headers["content-type"]).toBe("application/json");
    expect(call.headers.accept).toBe("application/json, text/event-stream");
    expect(call.headers.authorization).toBe(`Bearer ${TOOL_TOKEN}`);
    expect(call.headers["idempotency-key"]).toBe(callId);
    expect(call.headers.traceparent).toBeUndefined();
    expect(call.body).toEqual({
      tenant_id: "acme",
      session_id: session.id,
      call_id: callId,
      arguments: { text: "hi" },
    });
    expect(Object.keys(call.body)).toEqual(["tenant_id", "session_id", "call_id", "arguments"]);
  });

  it("goes to the binding URL's path and query, as configured", async () => {
    const session = await client.createSession(oneCall("echo_with_query"));
    await runTurn(client, session.id, "go");
    expect(lastCall("/echo").target).toBe("/echo?region=eu&v=2");
  });

  it("carries the client's trace on as a child traceparent", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const session = await client.createSession(oneCall("echo"));
    const response = await httpRequest(`${brain.url}/sessions/${session.id}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ content: "traced" }),
    });
    await response.body.dump();
    await waitForEvents(client, session.id, (events) => events.at(-1)?.type === "turn.completed");
    const traceparent = String(lastCall("/echo").headers.traceparent);
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(traceparent).not.toContain("00f067aa0ba902b7");
  });

  it("has no Authorization header when the binding has no token_env", async () => {
    const session = await client.createSession(oneCall("echo"));
    await runTurn(client, session.id, "go");
    expect(lastCall("/echo").headers.authorization).toBeUndefined();
  });

  it("has its token redacted from the result without unmaking it, when the token is one of the protocol's words", async () => {
    const session = await client.createSession(oneCall("echo_with_short_token", { text: "some text" }));
    const events = await runTurn(client, session.id, "go");
    expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: '{"[redacted]":"some [redacted]"}' }],
    });
    expect(events.at(-1)?.type).toBe("turn.completed");
  });

  it("reuses keep-alive connections", async () => {
    const calls = 6;
    const session = await client.createSession({
      tools: ["echo"],
      script: [
        ...Array.from({ length: calls }, () => ({ tool_calls: [{ name: "echo", arguments: {} }] })),
        { text: "x" },
      ],
    });
    await runTurn(client, session.id, "go");
    const received = service.calls.filter((c) => c.path === "/echo").slice(-calls);
    for (const call of received) expect(call.headers.connection).toBe("keep-alive");
    // one connection per call would be six; a call sent the moment the last one's answer ended
    // may find its connection not yet free and open a second, which is then kept too
    const connections = new Set(received.map((call) => call.remotePort));
    expect(connections.has(undefined)).toBe(false);
    expect(connections.size).toBeLessThanOrEqual(2);
  });
});

describe("progress over SSE", () => {
  it("reaches every connected client live with the call_id, and is never stored", async () => {
    const session = await client.createSession(oneCall("progress"));
    const controller = new AbortController();
    const watchers = [0, 1].map(async () => {
      const seen: SessionEvent[] = [];
      for await (const event of client.streamEvents(session.id, { signal: controller.signal })) {
        seen.push(event);
        if (event.type === "turn.completed") break;
      }
      return seen;
    });
    // the streams are open before the turn starts: give them a moment to subscribe
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.sendMessage(session.id, "go");
    const [first, second] = await Promise.all(watchers);
    controller.abort();
    const callId = first?.find((e) => e.type === "tool.call")?.data.call_id;
    for (const seen of [first, second]) {
      const progress = (seen ?? []).filter((e) => e.type === "tool.progress");
      expect(progress.map((e) => e.data)).toEqual(
        [1, 2, 3].map((step) => ({ call_id: callId, name: "progress", data: { step } })),
      );
      expect(progress.every((e) => !("seq" in e))).toBe(true);
    }
    const stored = await client.events(session.id);
    expect(stored.some((e) => (e.type as string) === "tool.progress")).toBe(false);
    assertGapless(stored);
    expect(stored.find((e) => e.type === "tool.result")?.data.content).toEqual([
      { type: "text", text: "done" },
    ]);
  });

  it("stops reading at the result event", async () => {
    const session = await client.createSession(oneCall("result_then_garbage"));
    const events = await runTurn(client, session.id, "go");
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: false,
      content: [{ text: "first" }],
    });
    // Brain closed the stream instead of reading what came after the result
    await lastCall("/result-then-garbage").closed;
  });
});

describe("cancellation", () => {
  const callsTo = (path: string) => service.calls.filter((c) => c.path === path);

  /** A session whose turn has `count` calls to /hang out at once. */
  async function startHangingCalls(count = 1) {
    const session = await client.createSession({
      tools: ["hang"],
      script: [{ tool_calls: Array.from({ length: count }, () => ({ name: "hang", arguments: {} })) }],
    });
    const before = callsTo("/hang").length;
    await client.sendMessage(session.id, "go");
    while (callsTo("/hang").length < before + count) await new Promise((r) => setTimeout(r, 5));
    return { session, calls: callsTo("/hang").slice(before) };
  }

  const expectCancelled = (events: SessionEvent[], count: number) => {
    const results = events.filter((e) => e.type === "tool.result").map((e) => e.data);
    expect(results).toHaveLength(count);
    for (const result of results) {
      expect(result).toMatchObject({ is_error: true, unknown_outcome: true, error: { code: "cancelled" } });
    }
  };

  it("interrupt aborts every in-flight request: the service sees each connection close, each result is cancelled", async () => {
    // another session's call, out while the interrupt happens
    const bystander = await client.createSession(oneCall("held"));
    const before = callsTo("/held").length;
    const bystanderTurn = runTurn(client, bystander.id, "go");
    while (callsTo("/held").length === before) await new Promise((r) => setTimeout(r, 5));
    const bystanderCall = lastCall("/held");
    let bystanderClosed = false;
    void bystanderCall.closed.then(() => {
      bystanderClosed = true;
    });

    const { session, calls } = await startHangingCalls(3);
    await client.interrupt(session.id);
    await Promise.all(calls.map((call) => call.closed));
    const events = await client.events(session.id);
    expectCancelled(events, 3);
    expect(events.at(-1)?.type).toBe("turn.interrupted");

    // the bystander's request was not touched: it answers after the interrupt, and its result is its own
    expect(bystanderClosed).toBe(false);
    held.release();
    const other = await bystanderTurn;
    expect(other.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "held, then answered" }],
    });
  });

  it("DELETE aborts the in-flight request too, with a cancelled result, then closes the session", async () => {
    const { session, calls } = await startHangingCalls();
    await client.close(session.id);
    await Promise.all(calls.map((call) => call.closed));
    const events = await client.events(session.id);
    expectCancelled(events, 1);
    expect(events.map((e) => e.type).slice(-3)).toEqual([
      "tool.result",
      "turn.interrupted",
      "session.closed",
    ]);
  });
});

describe("inspection tokens", () => {
  it("read their own session only, read only, until the call returns; never stored or logged", async () => {
    otherSessionId = (await client.createSession()).id;
    const session = await client.createSession(oneCall("inspect"));
    await runTurn(client, session.id, "go");
    const report = inspections.at(-1) as InspectionReport;
    expect(report.token).toMatch(/^bit_/);
    expect(report.brainUrl).toBe(brain.url);
    expect(report).toMatchObject({
      session: 200,
      events: 200,
      sawOwnCall: true,
      otherSession: 404,
      postMessage: 401,
      catalog: 401,
    });

    // the call returned: the token is refused, and the stream opened with it has ended
    const after = await httpRequest(`${brain.url}/sessions/${session.id}`, {
      headers: { authorization: `Bearer ${report.token}` },
    });
    await after.body.dump();
    expect(after.statusCode).toBe(401);
    for (;;) {
      const next = await report.stream.next();
      if (next.done) break;
    }

    // the token is in neither the event log nor the logs
    await brain.restart();
    client = brain.client();
    expect(await brain.stored()).not.toContain(report.token);
    expect(brain.logs()).not.toContain(report.token);
    expect(brain.logs()).not.toContain(TOOL_TOKEN);
    expect(brain.logs()).not.toContain(brain.keys.acme);
  });

  it("are never stored, nor the tool token, when a service sends them back", async () => {
    const session = await client.createSession({
      tools: ["echo_request", "refuse_echoing"],
      script: [
        {
          tool_calls: [
            { name: "echo_request", arguments: {} },
            { name: "refuse_echoing", arguments: {} },
          ],
        },
        { text: "after" },
      ],
    });
    const events = await runTurn(client, session.id, "go");
    const token = String(lastCall("/echo-request").body.inspection_token);
    expect(token).toMatch(/^bit_/);
    // the two calls run at once: their results are stored in the order they finish
    const resultOf = (name: string) =>
      events.find((event) => event.type === "tool.result" && event.data.name === name)?.data;
    const [echoed, refused] = [resultOf("echo_request"), resultOf("refuse_echoing")];
    const stored = JSON.stringify(events);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(TOOL_TOKEN);
    expect(echoed).toMatchObject({
      is_error: false,
      content: [
        {
          type: "text",
          text: expect.stringMatching(/^Bearer \[redacted\] .*"inspection_token":"\[redacted\]"/),
        },
      ],
      structured_content: { "[redacted]": { inspection_token: "[redacted]" }, auth: "Bearer [redacted]" },
    });
    expect(refused).toMatchObject({
      error: {
        code: "http_status",
        message: "the tool service answered 400: bad request from Bearer [redacted]",
      },
    });
  });

  it("are never in progress sent to clients, in strings or keys, when a service echoes them", async () => {
    const session = await client.createSession(oneCall("progress_echo"));
    const stream = await httpRequest(`${brain.url}/sessions/${session.id}/events`, {
      headers: { authorization: `Bearer ${brain.keys.acme}`, accept: "text/event-stream" },
    });
    await client.sendMessage(session.id, "go");
    let raw = "";
    for await (const chunk of stream.body) {
      raw += chunk.toString();
      if (raw.includes("event: turn.completed")) break;
    }
    stream.body.destroy();
    const token = String(lastCall("/progress-echo").body.inspection_token);
    expect(raw).toContain("event: tool.progress");
    expect(raw).toContain(`"said":"Bearer [redacted] and [redacted]"`);
    expect(raw).toContain(`"[redacted]":"Bearer [redacted]"`);
    expect(raw).toContain(`"data":"[redacted]Bearer [redacted]"`);
    expect(raw).not.toContain(token);
    expect(raw).not.toContain(TOOL_TOKEN);
  });

  it.each([
    ["an error snippet", "http_status", undefined, 460],
    ["an unknown event's name", "invalid_result", "event", 0],
    ["a content type", "invalid_result", "type", 0],
  ] as const)(
    "leave no piece in %s, wherever the service puts them across its cut",
    async (_, code, where, from) => {
      const calls = (["bearer", "inspection"] as const).flatMap((secret) =>
        Array.from({ length: 60 }, (_, i) => ({
          name: "refuse_at",
          arguments: { offset: from + i, secret, ...(where && { where }) },
        })),
      );
      const session = await client.createSession({
        tools: ["refuse_at"],
        script: [{ tool_calls: calls }, { text: "after" }],
      });
      const events = await runTurn(client, session.id, "go");
      const results = events.filter((event) => event.type === "tool.result");
      expect(results).toHaveLength(calls.length);
      const runs = (secret: string) =>
        Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8));
      const tokenOf = new Map(
        service.calls
          .filter((call) => call.path === "/refuse-at")
          .map((call) => [call.body.call_id, String(call.body.inspection_token)]),
      );
      for (const result of results) {
        const stored = JSON.stringify(result);
        expect(result.data).toMatchObject({ error: { code } });
        for (const secret of [TOOL_TOKEN, String(tokenOf.get(result.data.call_id))]) {
          for (const run of runs(secret)) expect(stored).not.toContain(run);
        }
      }
    },
  );

  it("are not sent to bindings without inspect_session", async () => {
    const session = await client.createSession(oneCall("echo"));
    await runTurn(client, session.id, "go");
    expect(lastCall("/echo").body.inspection_token).toBeUndefined();
    expect(lastCall("/echo").body.brain_url).toBeUndefined();
  });
});

describe("concurrency", () => {
  it("200 concurrent calls across 50 sessions end with 200 results and gapless seq", async () => {
    const four = Array.from({ length: 4 }, (_, i) => ({ name: "echo", arguments: { i } }));
    const sessions = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.createSession({ tools: ["echo"], script: [{ tool_calls: four }, { text: "ok" }] }),
      ),
    );
    await Promise.all(sessions.map((s) => client.sendMessage(s.id, "go")));
    let results = 0;
    for (const s of sessions) {
      const events = await waitForEvents(client, s.id, (all) => all.at(-1)?.type === "turn.completed");
      assertGapless(events);
      const calls = events.filter((e) => e.type === "tool.call").map((e) => e.data.call_id);
      const answered = events.filter((e) => e.type === "tool.result").map((e) => e.data.call_id);
      expect(answered.sort()).toEqual(calls.sort());
      results += answered.length;
    }
    expect(results).toBe(200);
  });
});

describe("proxies", () => {
  let proxy: ForwardProxy;
  let refusing: ForwardProxy;
  beforeAll(async () => {
    proxy = await startForwardProxy();
    refusing = await startForwardProxy({ refuse: true });
  });
  afterAll(async () => {
    await proxy?.close();
    await refusing?.close();
  });

  async function echoThrough(env: Record<string, string>) {
    const proxied = await startBrain(
      {
        tools: [
          {
            name: "echo",
            description: "e",
            input_schema: { type: "object" },
            url: service.at("/echo"),
            tenants: ["acme"],
          },
        ],
      },
      { start: { env } },
    );
    try {
      const c = proxied.client();
      const session = await c.createSession(oneCall("echo", { via: "proxy" }));
      const events = await runTurn(c, session.id, "go");
      return events.find((e) => e.type === "tool.result")?.data;
    } finally {
      await proxied.stop();
    }
  }

  it("carries the call through HTTP_PROXY", async () => {
    const before = proxy.carried.length;
    const result = await echoThrough({ HTTP_PROXY: proxy.url });
    expect(result).toMatchObject({ is_error: false });
    const port = new URL(service.url).port;
    expect(proxy.carried.slice(before).some((line) => line.includes(`127.0.0.1:${port}`))).toBe(true);
  });

  it("goes direct when NO_PROXY covers the host", async () => {
    const before = proxy.carried.length;
    const result = await echoThrough({ HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" });
    expect(result).toMatchObject({ is_error: false });
    expect(proxy.carried.length).toBe(before);
  });

  it("is unreachable when the proxy refuses, and nothing reaches the service", async () => {
    const before = service.calls.length;
    const result = await echoThrough({ HTTP_PROXY: refusing.url });
    expect(result).toMatchObject({ is_error: true, unknown_outcome: false, error: { code: "unreachable" } });
    expect(service.calls.length).toBe(before);
    expect(refusing.carried.length).toBeGreaterThan(0);
  });
});
