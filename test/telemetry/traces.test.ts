import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, runTurn, waitForEvents } from "../helpers/turns.js";
import { anthropicError, anthropicReply } from "../providers/fake-anthropic.js";
import { type FakeModelServer, startFakeModelServer } from "../providers/fake-model-server.js";

const TOOL_TOKEN = "tool-token-5f1e9c2d7a";
const PROVIDER_KEY = "sk-ant-test-2c8e4a6f0b1d3e5a";
const COLLECTOR_KEY = "collector-key-8b3d0e6f4c";
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

let receiver: OtlpReceiver;
let service: ToolService;
let provider: FakeModelServer;
let brain: TestBrain;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  provider = await startFakeModelServer();
  service = await startToolService({
    "/lookup": (call, res) => sendJson(res, textResult(`found ${JSON.stringify(call.body.arguments)}`)),
    "/broken": (_call, res) => sendJson(res, { message: "it broke" }, 500),
    "/refused": (_call, res) => sendJson(res, { message: "no such thing" }, 404),
    // the request arrived whole, then the connection goes: the tool may have run
    "/dropped": (_call, res) => {
      res.socket?.destroy();
    },
  });
  const binding = (name: string) => service.binding(name, { token_env: "TOOL_TOKEN" });
  brain = await startBrain(
    {
      tools: ["lookup", "broken", "refused", "dropped"].map(binding),
      models: [
        { name: "default", provider: "scripted" },
        {
          name: "claude",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          base_url: provider.url,
          api_key_env: "PROVIDER_KEY",
        },
        // a small window whose summaries the provider's model writes
        {
          name: "compacted",
          provider: "scripted",
          context_window: 1500,
          max_output_tokens: 100,
          context: { compaction_model: "claude" },
        },
      ],
    },
    {
      env: {
        TOOL_TOKEN,
        PROVIDER_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`,
        OTEL_SERVICE_NAME: "brain-under-test",
        // spans reach the receiver moments after they end, so the test waits little
        OTEL_BSP_SCHEDULE_DELAY: "20",
      },
    },
  );
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
  await provider?.close();
  await receiver?.close();
});

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId);

describe("a turn's trace, exported over OTLP/HTTP", () => {
  let spans: ReceivedSpan[];
  let turn: ReceivedSpan;
  let sessionId: string;

  beforeAll(async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["lookup", "broken"],
      script: [
        {
          tool_calls: [
            { name: "lookup", arguments: { q: "one" } },
            { name: "lookup", arguments: { q: "two" } },
            { name: "broken", arguments: {} },
          ],
          usage: { input_tokens: 120, output_tokens: 30 },
        },
        { text: "done", usage: { input_tokens: 200, output_tokens: 5 } },
      ],
    });
    sessionId = session.id;
    await client.sendMessage(sessionId, "look things up", {
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
    });
    await waitForEvents(client, sessionId, (events) => events.at(-1)?.type === "turn.completed");
    spans = await receiver.waitFor((all) =>
      all.some((span) => span.name === "turn" && span.parentSpanId === CLIENT_SPAN),
    );
    turn = spans.find((span) => span.name === "turn" && span.parentSpanId === CLIENT_SPAN) as ReceivedSpan;
  });

  it("puts the turn under the client's span, in the client's trace, as Brain's service", () => {
    expect(turn.traceId).toBe(CLIENT_TRACE);
    expect(turn.attributes["brain.session.id"]).toBe(sessionId);
    expect(turn.attributes["brain.turn.end"]).toBe("completed");
    expect(turn.status.code).toBe(0);
    expect(turn.resource["service.name"]).toBe("brain-under-test");
  });

  it("names the turn's span in its turn.started event", async () => {
    const events = await brain.client().events(sessionId);
    expect(ofType(events, "turn.started").at(-1)?.data.traceparent).toBe(
      `00-${CLIENT_TRACE}-${turn.spanId}-01`,
    );
  });

  it("has a span per model call under the turn, with the GenAI conventions' attributes", () => {
    const calls = childrenOf(spans, turn).filter(
      (span) => span.attributes["gen_ai.operation.name"] === "chat",
    );
    expect(calls.map((span) => span.name)).toEqual(["chat default", "chat default"]);
    expect(calls.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        "gen_ai.system": "scripted",
        "gen_ai.request.model": "default",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.response.finish_reasons": ["tool_use"],
      }),
      expect.objectContaining({ "gen_ai.usage.input_tokens": 200, "gen_ai.usage.output_tokens": 5 }),
    ]);
  });

  it("has a span per tool call under the turn: two that succeeded in parallel and one that failed", () => {
    const calls = childrenOf(spans, turn).filter((span) => span.name.startsWith("execute_tool "));
    const byName = (name: string) => calls.filter((span) => span.name === `execute_tool ${name}`);
    expect(byName("lookup")).toHaveLength(2);
    for (const span of byName("lookup")) {
      expect(span.kind).toBe(3); // client
      expect(span.attributes).toMatchObject({
        "gen_ai.tool.name": "lookup",
        "brain.tool.outcome": "ok",
        "http.response.status_code": 200,
        // both answers are as long: `found {"q":"one"}` and `found {"q":"two"}`
        "brain.tool.response_bytes": Buffer.byteLength(JSON.stringify(textResult('found {"q":"one"}'))),
      });
      expect(span.status.code).toBe(0);
    }
    const [broken] = byName("broken");
    expect(broken?.attributes).toMatchObject({
      "brain.tool.outcome": "http_status",
      "brain.tool.unknown_outcome": true,
      "error.type": "http_status",
      "http.response.status_code": 500,
      "brain.tool.response_bytes": Buffer.byteLength(JSON.stringify({ message: "it broke" })),
    });
    expect(broken?.status.code).toBe(2);
    expect(new Set(calls.map((span) => span.attributes["gen_ai.tool.call.id"])).size).toBe(3);
  });

  it("gives each tool service a traceparent naming the exported span of its call", () => {
    const received = service.calls.filter((call) => call.body.session_id === sessionId);
    expect(received).toHaveLength(3);
    for (const call of received) {
      const [, traceId, spanId] = String(call.headers.traceparent).split("-");
      const span = spans.find((candidate) => candidate.spanId === spanId);
      expect(traceId).toBe(CLIENT_TRACE);
      expect(span?.name).toBe(`execute_tool ${call.path.slice(1)}`);
      expect(span?.attributes["gen_ai.tool.call.id"]).toBe(call.body.call_id);
    }
  });

  it("has a span per store append under the turn", () => {
    const appends = childrenOf(spans, turn).filter((span) => span.name === "store append");
    // the calls, three results, the last reply with the turn's end
    expect(appends.length).toBeGreaterThanOrEqual(5);
    expect(appends.every((span) => span.attributes["db.operation.name"] === "append")).toBe(true);
  });

  it("sends the collector's headers, and no key or token of Brain's in a span", () => {
    expect(receiver.requests.at(-1)?.headers["x-collector-key"]).toBe(COLLECTOR_KEY);
    // the specification's default encoding
    expect(receiver.requests.at(-1)?.headers["content-type"]).toBe("application/x-protobuf");
    const exported = receiver.requests.map((request) => request.body).join("\n");
    for (const secret of [TOOL_TOKEN, PROVIDER_KEY, brain.keys.acme, brain.keys.globex, COLLECTOR_KEY])
      expect(exported).not.toContain(secret);
    expect(brain.logs()).not.toContain(COLLECTOR_KEY);
  });

  it("logs each request with the client's trace and span ids", () => {
    const lines = brain
      .logs()
      .split("\n")
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line));
    expect(lines).toContainEqual(
      expect.objectContaining({
        route: "/sessions/{id}/messages",
        status: 202,
        trace_id: CLIENT_TRACE,
        span_id: CLIENT_SPAN,
      }),
    );
  });

  it("starts a trace of its own for a message that came without one", async () => {
    const client = brain.client();
    const session = await client.createSession({ script: [{ text: "untraced" }] });
    await client.sendMessage(session.id, "hello");
    const events = await waitForEvents(client, session.id, (all) => all.at(-1)?.type === "turn.completed");
    const [, traceId, spanId] = String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-");
    await receiver.waitFor((all) => all.some((span) => span.spanId === spanId));
    expect(traceId).not.toBe(CLIENT_TRACE);
    const exported = receiver.spans.find((span) => span.spanId === spanId);
    expect(exported?.name).toBe("turn");
    expect(exported?.traceId).toBe(traceId);
    expect(exported?.parentSpanId).toBeUndefined();
  });
});

describe("a tool call's span says whether the tool may have run", () => {
  let calls: Map<string, ReceivedSpan>;

  beforeAll(async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["lookup", "refused", "dropped"],
      script: [
        {
          tool_calls: [
            { name: "lookup", arguments: {} },
            { name: "refused", arguments: {} },
            { name: "dropped", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    });
    const events = await runTurn(client, session.id, "try them all");
    const turnSpan = String(ofType(events, "turn.started")[0]?.data.traceparent).split("-")[2];
    const isCall = (span: ReceivedSpan) =>
      span.parentSpanId === turnSpan && span.name.startsWith("execute_tool ");
    const spans = await receiver.waitFor((all) => all.filter(isCall).length === 3);
    calls = new Map(spans.filter(isCall).map((span) => [span.name.slice("execute_tool ".length), span]));
  });

  it("true for a connection lost after the request was sent", () => {
    expect(calls.get("dropped")?.attributes).toMatchObject({
      "brain.tool.outcome": "connection_lost",
      "brain.tool.unknown_outcome": true,
      "error.type": "connection_lost",
    });
    expect(calls.get("dropped")?.status.code).toBe(2);
  });

  it("false for a call the service refused with a 4xx", () => {
    expect(calls.get("refused")?.attributes).toMatchObject({
      "brain.tool.outcome": "http_status",
      "brain.tool.unknown_outcome": false,
      "http.response.status_code": 404,
    });
  });

  it("absent for the service's own result, which has no unknown_outcome", () => {
    expect(calls.get("lookup")?.attributes["brain.tool.outcome"]).toBe("ok");
    expect(calls.get("lookup")?.attributes).not.toHaveProperty(["brain.tool.unknown_outcome"]);
  });
});

describe("exported in the JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)", () => {
  it("sends the same turn span as JSON", async () => {
    const jsonReceiver = await startOtlpReceiver();
    const jsonBrain = await startBrain(
      { models: [{ name: "default", provider: "scripted" }] },
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: jsonReceiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_BSP_SCHEDULE_DELAY: "20",
        },
      },
    );
    try {
      const client = jsonBrain.client();
      const session = await client.createSession({ script: [{ text: "in json" }] });
      await client.sendMessage(session.id, "hello");
      const events = await waitForEvents(client, session.id, (all) => all.at(-1)?.type === "turn.completed");
      const [, traceId, spanId] = String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-");
      const spans = await jsonReceiver.waitFor((all) => all.some((span) => span.spanId === spanId));
      expect(spans.find((span) => span.spanId === spanId)).toMatchObject({ name: "turn", traceId });
      expect(jsonReceiver.requests.map((request) => request.headers["content-type"])).toContain(
        "application/json",
      );
    } finally {
      await jsonBrain.stop();
      await jsonReceiver.close();
    }
  });
});

describe("a message queued while a turn runs", () => {
  it("has its turn under the span it was sent with, named in its turn.started", async () => {
    const client = brain.client();
    const session = await client.createSession({
      script: [{ text: "first", delay_ms: 300 }, { text: "second" }],
    });
    await client.sendMessage(session.id, "one");
    const queuedUnder = `00-${CLIENT_TRACE}-${"a".repeat(16)}-01`;
    expect(
      await client.sendMessage(session.id, "two", { onBusy: "enqueue", traceparent: queuedUnder }),
    ).toEqual({
      queued: 1,
    });
    const events = await waitForEvents(
      client,
      session.id,
      (all) => ofType(all, "turn.completed").length === 2,
    );
    expect(ofType(events, "message.queued")[0]?.data.traceparent).toBe(queuedUnder);
    const [, traceId, spanId] = String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-");
    expect(traceId).toBe(CLIENT_TRACE);
    const spans = await receiver.waitFor((all) => all.some((span) => span.spanId === spanId));
    expect(spans.find((span) => span.spanId === spanId)).toMatchObject({
      name: "turn",
      parentSpanId: "a".repeat(16),
    });
  });
});

describe("a model call to a provider, retried once", () => {
  it("has the provider's response id and a retry event on its span", async () => {
    provider.enqueue(
      anthropicError(529, "overloaded_error", "Overloaded", { "retry-after": "0" }),
      anthropicReply({ text: "hello", usage: { input: 42, output: 7 } }),
    );
    const client = brain.client();
    const session = await client.createSession({ model: "claude" });
    await client.sendMessage(session.id, "hi");
    await waitForEvents(client, session.id, (events) => events.at(-1)?.type === "turn.completed");
    const spans = await receiver.waitFor((all) => all.some((span) => span.name === "chat claude-sonnet-4-5"));
    const call = spans.find((span) => span.name === "chat claude-sonnet-4-5");
    expect(call?.attributes).toMatchObject({
      "gen_ai.system": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.response.id": "msg_01XFDUDYJgAACzvnptvVoYEL",
      "gen_ai.usage.input_tokens": 42,
      "gen_ai.usage.output_tokens": 7,
    });
    expect(call?.events).toEqual([
      {
        name: "retry",
        attributes: expect.objectContaining({ attempt: 2, "error.type": "provider_overloaded" }),
      },
    ]);
  });

  it("logs the retry with the trace and span ids of the exported turn", async () => {
    const call = receiver.spans.find((span) => span.name === "chat claude-sonnet-4-5") as ReceivedSpan;
    const turn = receiver.spans.find((span) => span.spanId === call.parentSpanId);
    expect(turn?.name).toBe("turn");
    const retries = brain
      .logs()
      .split("\n")
      .filter((line) => line.includes("model call failed, retrying"))
      .map((line) => JSON.parse(line));
    expect(retries).toEqual([
      expect.objectContaining({
        code: "provider_overloaded",
        trace_id: turn?.traceId,
        span_id: turn?.spanId,
      }),
    ]);
  });
});

describe("a compaction whose summary another model entry writes, retried once", () => {
  it("is a model call of the turn: under its span, its retry logged with its trace ids", async () => {
    provider.enqueue(
      anthropicError(529, "overloaded_error", "Overloaded", { "retry-after": "0" }),
      anthropicReply({ text: "the summary", usage: { input: 300, output: 4 } }),
    );
    const client = brain.client();
    const session = await client.createSession({
      model: "compacted",
      script: [{ text: "first" }, { text: "second" }],
    });
    // about 800 tokens, then 400 more: past the window's 1100, so the first turn is summarised
    await runTurn(client, session.id, "a".repeat(2000));
    const events = await runTurn(client, session.id, "b".repeat(1000));
    expect(ofType(events, "context.compacted")[0]?.data.summary).toBe("the summary");
    const [, traceId, turnSpan] = String(ofType(events, "turn.started")[0]?.data.traceparent).split("-");
    const spans = await receiver.waitFor((all) =>
      all.some((span) => span.name === "chat claude-sonnet-4-5" && span.parentSpanId === turnSpan),
    );
    expect(
      spans.find((span) => span.name === "chat claude-sonnet-4-5" && span.parentSpanId === turnSpan)?.events,
    ).toEqual([expect.objectContaining({ name: "retry" })]);
    const retries = brain
      .logs()
      .split("\n")
      .filter((line) => line.includes("model call failed, retrying") && line.includes(String(traceId)))
      .map((line) => JSON.parse(line));
    expect(retries).toEqual([
      expect.objectContaining({ code: "provider_overloaded", trace_id: traceId, span_id: turnSpan }),
    ]);
  });
});
