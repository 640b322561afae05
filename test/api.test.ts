import { connect } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainApiError } from "../src/client/client.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { exchangeRaw, rawJsonBody } from "./helpers/raw-http.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { assertGapless, runTurn, storedOnly } from "./helpers/turns.js";

let brain: TestBrain;
let service: ToolService;

const objectSchema = { type: "object", properties: { text: { type: "string" } } };

beforeAll(async () => {
  service = await startToolService({
    "/echo": (call, res) =>
      sendJson(res, textResult(String((call.body.arguments as { text?: string }).text))),
  });
  brain = await startBrain(
    {
      tools: [
        {
          name: "echo",
          description: "Echo.",
          input_schema: objectSchema,
          url: service.at("/echo"),
          token_env: "TOOLS_KEY",
          tenants: ["acme"],
        },
        {
          name: "secret_tool",
          description: "Globex only.",
          input_schema: objectSchema,
          url: service.at("/secret"),
          tenants: ["globex"],
        },
        {
          name: "shared",
          description: "Both tenants.",
          input_schema: objectSchema,
          output_schema: { type: "object" },
          url: service.at("/shared"),
          tenants: ["acme", "globex"],
        },
      ],
      models: [
        { name: "default", provider: "scripted" },
        // never called: it is here so that a session config can name a model that is not scripted
        {
          name: "local",
          provider: "openai",
          model: "qwen3:8b",
          base_url: "http://127.0.0.1:9/v1",
          context_window: 32_768,
        },
      ],
      limits: { max_request_bytes: 4096 },
    },
    { env: { TOOLS_KEY: "tool-token-abcdef" } },
  );
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

/** Every status each operation answered in these tests, checked against /openapi.json at the end. */
const answered = new Map<string, Set<number>>();

async function call(
  method: string,
  path: string,
  options: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? brain.keys.acme}`;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const response = await request(`${brain.url}${path}`, {
    method: method as "GET",
    headers,
    body: options.body,
  });
  const text = await response.body.text();
  const operation = `${method.toLowerCase()} ${path.split("?")[0]?.replace(/\/ses_[^/]+/, "/{id}")}`;
  answered.set(operation, (answered.get(operation) ?? new Set()).add(response.statusCode));
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: String(response.headers["content-type"]).startsWith("application/json")
      ? JSON.parse(text)
      : undefined,
  };
}

describe("authentication", () => {
  it.each([
    ["no header", null],
    ["a wrong key", "key-wrong"],
    ["a near-miss key", "KEY"],
  ])("refuses %s with 401 and a JSON error", async (_, key) => {
    const response = await call("GET", "/catalog", { key: key === "KEY" ? `${brain.keys.acme}x` : key });
    expect(response.status).toBe(401);
    expect(response.json.error.code).toBe("unauthorized");
    expect(response.headers["www-authenticate"]).toBe("Bearer");
  });

  it("refuses a key in another scheme", async () => {
    const response = await call("GET", "/catalog", {
      key: null,
      headers: { authorization: `Basic ${brain.keys.acme}` },
    });
    expect(response.status).toBe(401);
  });

  it("serves /healthz and /openapi.json without a key", async () => {
    expect((await call("GET", "/healthz", { key: null })).json).toEqual({ status: "ok" });
    expect((await call("GET", "/openapi.json", { key: null })).status).toBe(200);
  });
});

describe("GET /catalog", () => {
  it("lists the caller's tools only, and never where they run", async () => {
    const acme = await call("GET", "/catalog");
    expect(acme.json.tools.map((tool: { name: string }) => tool.name)).toEqual(["echo", "shared"]);
    expect(acme.json.tools[0]).toEqual({ name: "echo", description: "Echo.", input_schema: objectSchema });
    expect(acme.json.tools[1].output_schema).toEqual({ type: "object" });
    const globex = await call("GET", "/catalog", { key: brain.keys.globex });
    expect(globex.json.tools.map((tool: { name: string }) => tool.name)).toEqual(["secret_tool", "shared"]);
    for (const response of [acme, globex]) {
      expect(response.text).not.toContain("url");
      expect(response.text).not.toContain("token_env");
      expect(response.text).not.toContain("127.0.0.1");
      expect(response.text).not.toContain("tool-token-abcdef");
      expect(response.text).not.toContain('"tenants"');
    }
  });
});

describe("sessions", () => {
  it("creates a session with defaults filled in", async () => {
    const response = await call("POST", "/sessions", {
      body: JSON.stringify({ config: { tools: ["echo"], system: "Be brief." } }),
    });
    expect(response.status).toBe(201);
    expect(response.json).toMatchObject({
      status: "idle",
      config: { model: "default", system: "Be brief.", tools: ["echo"], max_steps: 32, metadata: {} },
    });
    expect(response.json.id).toMatch(/^ses_/);
    expect(response.headers.location).toBe(`/sessions/${response.json.id}`);
    expect(Date.parse(response.json.created_at)).not.toBeNaN();
    const read = await call("GET", `/sessions/${response.json.id}`);
    expect(read.json).toEqual(response.json);
  });

  it("accepts an empty body", async () => {
    const response = await call("POST", "/sessions", { key: brain.keys.acme });
    expect(response.status).toBe(201);
    expect(response.json.config.tools).toEqual([]);
  });

  it.each([
    [{ config: { tools: ["nope"] } }, 'config.tools[0]: unknown tool "nope"'],
    [{ config: { tools: ["echo", "secret_tool"] } }, 'config.tools[1]: unknown tool "secret_tool"'],
    [{ config: { model: "gpt-9" } }, 'config.model: unknown model "gpt-9"'],
    [{ config: { max_steps: 500 } }, "config.max_steps: must be at most 32 (limits.max_steps_per_turn)"],
    [
      { config: { model: "local", script: [{ text: "hi" }] } },
      'config.script: needs a model whose provider is "scripted"; model "local" is provider "openai"',
    ],
    [
      { config: { script: [{ text: "hi", usage: { input_tokens: 1e308, output_tokens: 1 } }] } },
      "config.script[0].usage.input_tokens: must be <= 1099511627776",
    ],
    [{ config: { tools: "echo" } }, "config.tools: must be array"],
    [{ config: { tools: ["echo"], colour: 1 } }, "config.colour: unknown field"],
    [{ configuration: {} }, "configuration: unknown field"],
    [[], "(root): must be object"],
  ])("refuses %j with 400 naming the field", async (body, message) => {
    const before = (await brain.client().listSessions({ limit: 100 })).sessions.length;
    const response = await call("POST", "/sessions", { body: JSON.stringify(body) });
    expect(response.status).toBe(400);
    expect(response.json.error).toEqual({ code: "invalid_request", message });
    // nothing half-written: no session appeared
    expect((await brain.client().listSessions({ limit: 100 })).sessions.length).toBe(before);
  });

  it("refuses malformed JSON, a wrong content type, and an oversized body", async () => {
    const malformed = await call("POST", "/sessions", { body: '{"config": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.message).toMatch(/not valid JSON/);
    const wrongType = await call("POST", "/sessions", {
      body: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(wrongType.status).toBe(415);
    const encoded = await call("POST", "/sessions", {
      body: "{}",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect(encoded.status).toBe(415);
    expect(encoded.json.error.message).toMatch(/must not be encoded/);
    const big = await call("POST", "/sessions", {
      body: JSON.stringify({ config: { system: "x".repeat(5000) } }),
    });
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe("payload_too_large");
    // sent chunked, with no Content-Length to check up front: refused as the bytes pass the cap
    const chunked = await request(`${brain.url}/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${brain.keys.acme}`, "content-type": "application/json" },
      body: Readable.from(
        (function* () {
          yield '{"config": {"system": "';
          for (let i = 0; i < 20; i++) yield "x".repeat(1024);
          yield '"}}';
        })(),
      ),
    });
    expect(chunked.statusCode).toBe(413);
    expect(((await chunked.body.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    // the unread rest of the body leaves that connection unusable: Brain closes it, and the
    // client's next request goes out on a fresh one instead of waiting on a dead one
    expect(chunked.headers.connection).toBe("close");
    expect((await call("GET", "/catalog")).status).toBe(200);
  });

  it("lists newest first with cursor paging, and only the caller's", async () => {
    const client = brain.client("globex");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.createSession()).id);
    const first = await client.listSessions({ limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual([ids[4], ids[3]]);
    const second = await client.listSessions({ limit: 2, cursor: first.next_cursor ?? "" });
    expect(second.sessions.map((s) => s.id)).toEqual([ids[2], ids[1]]);
    const third = await client.listSessions({ limit: 2, cursor: second.next_cursor ?? "" });
    expect(third.sessions.map((s) => s.id)).toEqual([ids[0]]);
    expect(third.next_cursor).toBeNull();
    const acmeIds = (await brain.client("acme").listSessions({ limit: 100 })).sessions.map((s) => s.id);
    for (const id of ids) expect(acmeIds).not.toContain(id);
    expect((await call("GET", "/sessions?limit=0")).status).toBe(400);
    expect((await call("GET", "/sessions?limit=abc")).status).toBe(400);
  });

  it("refuses a cursor that no listing of the caller's gave", async () => {
    const mine = await brain.client("globex").createSession();
    const forged = ["nope", "ses_00000000000000000000000000", mine.id, `${mine.id}x`];
    for (const cursor of forged) {
      const response = await call("GET", `/sessions?cursor=${encodeURIComponent(cursor)}`);
      expect(response.status, cursor).toBe(400);
      expect(response.json.error).toEqual({
        code: "invalid_request",
        message: "cursor: not a next_cursor from a listing of your sessions",
      });
    }
    expect((await call("GET", `/sessions?cursor=${mine.id}`, { key: brain.keys.globex })).status).toBe(200);
  });
});

describe("another tenant's session", () => {
  it("is a 404 on every route, and its events stay untouched", async () => {
    const own = await brain.client("acme").createSession({ tools: ["echo"] });
    const other = brain.keys.globex;
    const attempts = [
      call("GET", `/sessions/${own.id}`, { key: other }),
      call("GET", `/sessions/${own.id}/events`, { key: other }),
      call("GET", `/sessions/${own.id}/events`, { key: other, headers: { accept: "text/event-stream" } }),
      call("POST", `/sessions/${own.id}/messages`, { key: other, body: JSON.stringify({ content: "hi" }) }),
      call("POST", `/sessions/${own.id}/interrupt`, { key: other }),
      call("DELETE", `/sessions/${own.id}`, { key: other }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(404);
      expect(response.json.error.code).toBe("not_found");
    }
    const events = await brain.client("acme").events(own.id);
    expect(events.map((e) => e.type)).toEqual(["session.created"]);
  });

  it("looks exactly like a session that does not exist", async () => {
    const own = await brain.client("acme").createSession();
    const theirs = await call("GET", `/sessions/${own.id}`, { key: brain.keys.globex });
    const missing = await call("GET", "/sessions/ses_doesnotexist", { key: brain.keys.globex });
    expect(theirs.status).toBe(missing.status);
    expect(Object.keys(theirs.json.error)).toEqual(Object.keys(missing.json.error));
  });
});

describe("messages and turns", () => {
  it("runs a turn that calls a tool and records every event with gapless seq", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["echo"],
      script: [
        { tool_calls: [{ name: "echo", arguments: { text: "{{message}}" } }] },
        { text: "done: {{result}}" },
      ],
    });
    const events = await runTurn(client, session.id, "ping");
    expect(events.map((e) => e.type)).toEqual([
      "message.user",
      "turn.started",
      "message.assistant",
      "tool.call",
      "tool.result",
      "model.delta",
      "message.assistant",
      "turn.completed",
    ]);
    const stored = await client.events(session.id);
    assertGapless(stored);
    expect(stored).toEqual([expect.objectContaining({ type: "session.created" }), ...storedOnly(events)]);
    expect(stored.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "ping" }],
    });
  });

  it("answers 202, then 409 while the turn runs, then 202 again", async () => {
    const client = brain.client();
    const session = await client.createSession({
      script: [{ text: "slow", delay_ms: 300 }, { text: "again" }],
    });
    const first = await call("POST", `/sessions/${session.id}/messages`, {
      body: JSON.stringify({ content: "one" }),
    });
    expect(first.status).toBe(202);
    expect(first.json.seq).toBe(2);
    const busy = await call("POST", `/sessions/${session.id}/messages`, {
      body: JSON.stringify({ content: "two" }),
    });
    expect(busy.status).toBe(409);
    expect(busy.json.error.code).toBe("session_busy");
    const deadline = Date.now() + 5000;
    while ((await client.getSession(session.id)).status !== "idle" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(
      (await call("POST", `/sessions/${session.id}/messages`, { body: JSON.stringify({ content: "three" }) }))
        .status,
    ).toBe(202);
  });

  it.each([
    ["{}", "content: is required"],
    ['{"content": ""}', "content: must not be empty"],
    ['{"content": 5}', "content: must be string"],
    ['{"content": "hi", "role": "system"}', "role: unknown field"],
  ])("refuses the message %s with 400 and stores nothing", async (body, message) => {
    const client = brain.client();
    const session = await client.createSession();
    const response = await call("POST", `/sessions/${session.id}/messages`, { body });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toBe(message);
    expect((await client.events(session.id)).map((e) => e.type)).toEqual(["session.created"]);
    expect((await client.getSession(session.id)).status).toBe("idle");
  });

  it("interrupts a running turn, and answers 409 when none runs", async () => {
    const client = brain.client();
    const session = await client.createSession({ script: [{ text: "never", delay_ms: 10_000 }] });
    expect((await call("POST", `/sessions/${session.id}/interrupt`)).json.error.code).toBe("no_turn_running");
    await client.sendMessage(session.id, "go");
    const interrupted = await call("POST", `/sessions/${session.id}/interrupt`);
    expect(interrupted.status).toBe(200);
    expect(interrupted.json.status).toBe("idle");
    const types = (await client.events(session.id)).map((e) => e.type);
    expect(types).toEqual(["session.created", "message.user", "turn.started", "turn.interrupted"]);
  });

  it("closes a session: interrupts, records session.closed, then refuses writes with 409", async () => {
    const client = brain.client();
    const session = await client.createSession({ script: [{ text: "never", delay_ms: 10_000 }] });
    await client.sendMessage(session.id, "go");
    const closed = await call("DELETE", `/sessions/${session.id}`);
    expect(closed.status).toBe(200);
    expect(closed.json.status).toBe("closed");
    expect((await client.events(session.id)).map((e) => e.type).slice(-2)).toEqual([
      "turn.interrupted",
      "session.closed",
    ]);
    const late = await call("POST", `/sessions/${session.id}/messages`, {
      body: JSON.stringify({ content: "hello?" }),
    });
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe("session_closed");
    expect((await call("DELETE", `/sessions/${session.id}`)).status).toBe(409);
    expect((await call("POST", `/sessions/${session.id}/interrupt`)).json.error.code).toBe("session_closed");
  });
});

describe("GET /sessions/{id}/events", () => {
  it("returns events after a seq as JSON, bounded by limit", async () => {
    const client = brain.client();
    const session = await client.createSession();
    await runTurn(client, session.id, "hi");
    const all = await client.events(session.id);
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await client.events(session.id, { after: 3 })).map((e) => e.seq)).toEqual([4, 5]);
    expect((await client.events(session.id, { after: 1, limit: 2 })).map((e) => e.seq)).toEqual([2, 3]);
    expect((await call("GET", `/sessions/${session.id}/events?after=-1`)).status).toBe(400);
    expect((await call("GET", `/sessions/${session.id}/events?after=abc`)).status).toBe(400);
  });

  it("streams history then live events over SSE, and resumes with Last-Event-ID or ?after=", async () => {
    const client = brain.client();
    const session = await client.createSession();
    await runTurn(client, session.id, "first");
    const response = await request(`${brain.url}/sessions/${session.id}/events?after=2`, {
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        accept: "text/event-stream",
        "last-event-id": "3",
      },
    });
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    let text = "";
    for await (const chunk of response.body) {
      text += chunk;
      if (text.includes("event: turn.completed")) break;
    }
    // Last-Event-ID (3) wins over ?after=2: the stream starts at seq 4, after the pace of reconnects
    expect(text.startsWith("retry: 1000\n\nid: 4\nevent: message.assistant\ndata: ")).toBe(true);
    const frames = text.trim().split("\n\n").slice(1);
    expect(frames.map((frame) => frame.split("\n")[0])).toEqual(["id: 4", "id: 5"]);
    const parsed = JSON.parse(frames[1]?.split("\n")[2]?.slice(6) ?? "");
    expect(parsed).toMatchObject({ seq: 5, type: "turn.completed", data: { stop_reason: "end_turn" } });

    const resumed: string[] = [];
    const controller = new AbortController();
    // the message goes once the stream is open: a live-only event (model.delta) sent before is no one's
    let open = () => {};
    const connected = new Promise<void>((resolve) => {
      open = resolve;
    });
    const live = (async () => {
      const onStatus = (status: { state: string }) => status.state === "connected" && open();
      for await (const event of client.streamEvents(session.id, {
        after: 5,
        signal: controller.signal,
        onStatus,
      })) {
        resumed.push(event.type);
        if (event.type === "turn.completed") controller.abort();
      }
    })();
    await connected;
    await client.sendMessage(session.id, "second");
    await live;
    expect(resumed).toEqual([
      "message.user",
      "turn.started",
      "model.delta",
      "message.assistant",
      "turn.completed",
    ]);
  });

  it("ends at once a stream resumed at or after session.closed", async () => {
    const client = brain.client();
    const session = await client.createSession();
    await client.close(session.id);
    for (const resume of [{ "last-event-id": "2" }, { "last-event-id": "3" }, {}]) {
      const after = "last-event-id" in resume ? "" : "?after=7";
      const response = await request(`${brain.url}/sessions/${session.id}/events${after}`, {
        headers: { authorization: `Bearer ${brain.keys.acme}`, accept: "text/event-stream", ...resume },
        signal: AbortSignal.timeout(5000),
      });
      expect(response.statusCode).toBe(200);
      expect(await response.body.text()).toBe("retry: 1000\n\n");
    }
  });

  it("refuses to resume a session that goes on past its last event, where events would be missed", async () => {
    const session = await brain.client().createSession();
    for (const [headers, after] of [
      [{ "last-event-id": "2" }, ""],
      [{}, "?after=5"],
    ] as const) {
      const response = await call("GET", `/sessions/${session.id}/events${after}`, {
        headers: { accept: "text/event-stream", ...headers },
      });
      expect(response.status).toBe(400);
      expect(response.json.error.message).toMatch(/the session's last event is 1$/);
    }
    // at its last event is where a client that saw everything resumes
    const atEnd = await request(`${brain.url}/sessions/${session.id}/events`, {
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        accept: "text/event-stream",
        "last-event-id": "1",
      },
    });
    expect(atEnd.statusCode).toBe(200);
    atEnd.body.destroy();
  });

  it("refuses a Last-Event-ID that is not a seq", async () => {
    const session = await brain.client().createSession();
    for (const id of ["99999999999999999999", "-1", "abc", "9007199254740992"]) {
      const response = await call("GET", `/sessions/${session.id}/events`, {
        headers: { accept: "text/event-stream", "last-event-id": id },
      });
      expect(response.status, id).toBe(400);
      expect(response.json.error.message).toMatch(/^Last-Event-ID: must be an integer/);
    }
  });

  it("ends the stream after session.closed", async () => {
    const client = brain.client();
    const session = await client.createSession();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of client.streamEvents(session.id)) seen.push(event.type);
    })();
    await client.close(session.id);
    await reading;
    expect(seen).toEqual(["session.created", "session.closed"]);
  });
});

describe("routes", () => {
  it("answers unknown paths with 404 and wrong methods with 405", async () => {
    expect((await call("GET", "/nope")).status).toBe(404);
    const wrong = await call("PUT", "/sessions");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe("POST, GET");
  });

  it("describes exactly the real routes in /openapi.json", async () => {
    const doc = (await call("GET", "/openapi.json", { key: null })).json;
    expect(doc.openapi).toBe("3.1.0");
    const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(described).toEqual(
      [
        "GET /healthz",
        "GET /metrics",
        "GET /openapi.json",
        "GET /catalog",
        "POST /sessions",
        "GET /sessions",
        "GET /sessions/{id}",
        "POST /sessions/{id}/messages",
        "GET /sessions/{id}/events",
        "POST /sessions/{id}/interrupt",
        "POST /sessions/{id}/calls/{call_id}/approval",
        "DELETE /sessions/{id}",
        "GET /console",
        "GET /console/{file}",
      ].sort(),
    );
    // every described route answers something other than "no route"
    for (const entry of described) {
      const [method, path] = entry.split(" ") as [string, string];
      const response = await call(method, path.replace("{id}", "ses_missing"), {
        body: method === "POST" ? "{}" : undefined,
      });
      expect(response.json?.error?.message ?? "", entry).not.toMatch(/^no route/);
    }
  });

  it("describes the content type of every answer, and the statuses every operation shares", async () => {
    const doc = (await call("GET", "/openapi.json", { key: null })).json;
    expect(Object.keys(doc.paths["/metrics"].get.responses["200"].content)).toEqual(["text/plain"]);
    expect(Object.keys(doc.paths["/openapi.json"].get.responses["200"].content)).toEqual([
      "application/json",
    ]);
    const post = doc.paths["/sessions/{id}/messages"].post.responses;
    expect(Object.keys(post).sort()).toEqual(
      ["202", "400", "401", "404", "408", "409", "413", "415", "422", "429", "431", "500", "503"].sort(),
    );
    const idempotencyKey = doc.paths["/sessions/{id}/messages"].post.parameters.find(
      (parameter: { in: string }) => parameter.in === "header",
    );
    expect(idempotencyKey).toMatchObject({ name: "Idempotency-Key", required: false });
    expect(Object.keys(doc.paths["/healthz"].get.responses).sort()).toEqual(["200", "408", "431", "500"]);
  });

  it("exposes Prometheus metrics without ids or keys", async () => {
    const text = (await call("GET", "/metrics", { key: null })).text;
    expect(text).toContain("brain_http_requests_total");
    expect(text).toContain('route="/sessions/{id}/events"');
    expect(text).not.toContain(brain.keys.acme);
    expect(text).not.toMatch(/ses_[0-9a-z]{26}/);
  });
});

describe("each request's log line and count", () => {
  /** The "request" lines logged for requests sent with this trace id. */
  const linesOf = (traceId: string) =>
    brain
      .logs()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === "request" && line.trace_id === traceId);
  const counted = async (labels: string) => {
    const text = (await call("GET", "/metrics", { key: null })).text;
    const line = text.split("\n").find((l) => l.startsWith(`brain_http_requests_total{${labels}} `));
    return Number(line?.split(" ")[1] ?? 0);
  };
  const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;

  it("has one for an event stream its client left, which never finished", async () => {
    const session = await brain.client().createSession();
    const labels = 'method="GET",route="/sessions/{id}/events",status="200"';
    const before = await counted(labels);
    const traceId = "5a1e0f3c2b4d6e8f9a0b1c2d3e4f5a6b";
    const response = await request(`${brain.url}/sessions/${session.id}/events`, {
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        accept: "text/event-stream",
        traceparent: traceparent(traceId),
      },
    });
    for await (const _retry of response.body) break;
    await expect.poll(() => linesOf(traceId)).toHaveLength(1);
    expect(await counted(labels)).toBe(before + 1);
    expect(linesOf(traceId)).toEqual([
      expect.objectContaining({ route: "/sessions/{id}/events", status: 200, aborted: true }),
    ]);
  });

  it("has one for a request target that is no path", async () => {
    const labels = 'method="GET",route="(none)",status="400"';
    const before = await counted(labels);
    const traceId = "6b2f1a4d3c5e7f9a0b1c2d3e4f5a6b7c";
    const reply = await exchangeRaw(
      brain.url,
      `GET //[ HTTP/1.1\r\nhost: brain\r\ntraceparent: ${traceparent(traceId)}\r\nconnection: close\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(() => linesOf(traceId)).toHaveLength(1);
    expect(await counted(labels)).toBe(before + 1);
    expect(linesOf(traceId)).toEqual([expect.objectContaining({ route: "(none)", status: 400 })]);
    expect(linesOf(traceId)[0]).not.toHaveProperty("aborted");
  });
});

describe("HTTP that Node would answer on its own", () => {
  it.each([
    ["no Host header", "GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n", 400, "invalid_request"],
    [
      "an expectation other than 100-continue",
      "GET /healthz HTTP/1.1\r\nhost: brain\r\nexpect: tea\r\nconnection: close\r\n\r\n",
      400,
      "invalid_request",
    ],
    ["CONNECT", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1:22\r\n\r\n", 405, "method_not_allowed"],
  ])("answers %s with a JSON error", async (_, text, status, code) => {
    const reply = await exchangeRaw(brain.url, text);
    expect(reply).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(rawJsonBody(reply).error.code).toBe(code);
  });
});

describe("large sessions", () => {
  it("cuts a listing page at about 8 MiB of configs, and pages on to every session", async () => {
    // a Brain whose requests may carry a megabyte of metadata, as by default
    const roomy = await startBrain({});
    try {
      const client = roomy.client();
      const small: string[] = [];
      for (let i = 0; i < 3; i++) small.push((await client.createSession()).id);
      const pad = "x".repeat(1_000_000);
      const big: string[] = [];
      for (let i = 0; i < 9; i++) big.push((await client.createSession({ metadata: { pad } })).id);
      const first = await client.listSessions({ limit: 100 });
      // the ninth megabyte reaches the bound: the page ends there, short of its limit, with more to come
      expect(first.sessions.map((s) => s.id)).toEqual(big.toReversed());
      expect(first.next_cursor).toBe(big[0]);
      const second = await client.listSessions({ limit: 100, cursor: first.next_cursor ?? "" });
      expect(second.sessions.map((s) => s.id)).toEqual(small.toReversed());
      expect(second.next_cursor).toBeNull();
    } finally {
      await roomy.stop();
    }
  });
});

describe("the client", () => {
  it("turns API errors into BrainApiError with the stable code", async () => {
    const error = await brain
      .client("globex")
      .getSession("ses_missing")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrainApiError);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("slow and vanishing clients", () => {
  let timed: TestBrain;
  beforeAll(async () => {
    timed = await startBrain({ limits: { request_timeout_seconds: 0.5 } });
  });
  afterAll(async () => {
    await timed?.stop();
  });

  /** A raw connection that sends `head` and part of a body, then waits. */
  function partialRequest(
    url: string,
    head: string,
  ): Promise<{ reply: () => Promise<string>; close: () => void }> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        let received = "";
        socket.on("data", (chunk) => {
          received += chunk;
        });
        const ended = new Promise<string>((done) => socket.on("close", () => done(received)));
        socket.write(head);
        resolve({ reply: () => ended, close: () => socket.destroy() });
      });
      socket.on("error", reject);
    });
  }

  const head = (key: string) =>
    `POST /sessions HTTP/1.1\r\nhost: brain\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"config":`;

  it("answers 408 to a body that trickles past limits.request_timeout_seconds", async () => {
    const connection = await partialRequest(timed.url, head(timed.keys.acme));
    const reply = await connection.reply();
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { code: "request_timeout", message: "the request did not arrive in time" },
    });
    expect((await timed.client().listSessions()).sessions).toEqual([]);
  });

  it("logs a client leaving mid-body as that, not as an error", async () => {
    const connection = await partialRequest(timed.url, head(timed.keys.acme));
    await new Promise((resolve) => setTimeout(resolve, 50));
    connection.close();
    const deadline = Date.now() + 5000;
    while (!timed.logs().includes("client left mid-request") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lines = timed
      .logs()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.find((line) => line.msg === "client left mid-request")).toMatchObject({ level: 20 });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});

describe("/openapi.json", () => {
  it("describes every status each operation answered in these tests", async () => {
    const doc = (await call("GET", "/openapi.json", { key: null })).json;
    const undescribed: string[] = [];
    for (const [operation, statuses] of answered) {
      const [method, path] = operation.split(" ") as [string, string];
      const described = doc.paths[path]?.[method]?.responses;
      if (!described) continue; // no such operation: 404 and 405 of the router
      for (const status of statuses)
        if (!(String(status) in described)) undescribed.push(`${operation} ${status}`);
    }
    expect(undescribed).toEqual([]);
    expect(answered.size).toBeGreaterThan(8);
  });
});
