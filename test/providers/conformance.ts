import type { IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TOKEN_COUNT } from "../../protocol/script.js";
import type { BrainClient, SessionEvent, StoredEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { closedPort } from "../helpers/ports.js";
import { startForwardProxy } from "../helpers/proxy.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, runTurn } from "../helpers/turns.js";
import { type FakeModelServer, type Reply, startFakeModelServer } from "./fake-model-server.js";

export interface FakeCall {
  id: string;
  name: string;
  input: unknown;
}

/** One provider's side of the shared cases: how its fake answers, and how to read what Brain sent it. */
export interface ProviderAdapter {
  provider: "anthropic" | "openai";
  /** The base_url of a fake on `url`, as the SDK expects it. */
  baseUrl: (url: string) => string;
  text: (text: string, usage?: { input: number; output: number }) => Reply;
  toolCalls: (
    calls: FakeCall[],
    options?: { text?: string; usage?: { input: number; output: number } },
  ) => Reply;
  /** Tool calls each sent whole, in one event, as fast as Brain reads: for replies of many MiB. */
  wholeCalls: (calls: FakeCall[]) => Reply;
  /** One tool call whose arguments are `raw`, not JSON. */
  rawToolCall: (id: string, name: string, raw: string) => Reply;
  /** A reply whose stream is cut after `text` was sent. */
  cut: (text: string) => Reply;
  /** A reply that sends `text` and then stays silent. */
  stall: (text: string) => Reply;
  /** A reply that sends text deltas of `piece` and never ends. */
  endless: (piece: string) => Reply;
  error: (status: number, type: string, message: string, headers?: Record<string, string>) => Reply;
  /** The key as the SDK sent it. */
  key: (headers: IncomingHttpHeaders) => string | undefined;
  system: (body: unknown) => string | undefined;
  tools: (body: unknown) => { name: string; description: string; input_schema: unknown }[];
  /**
   * The conversation a request carries, one line per item in the same words for every provider:
   * `user: …`, `assistant: …`, `call ID NAME ARGUMENTS`, `result ID: …`, `result ID (error): …`.
   */
  transcript: (body: unknown) => string[];
}

export const PROVIDER_KEY = `sk-test-${"0123456789abcdef".repeat(2)}`;

/** A 1×1 PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** What a provider's own tests need from the shared setup. */
export interface ProviderTestContext {
  fake: FakeModelServer;
  brain: TestBrain;
  client: BrainClient;
  /** Create a session, run one turn, and return its events and everything stored. */
  turn: (
    config: Parameters<BrainClient["createSession"]>[0],
    message?: string,
  ) => Promise<{ session: { id: string }; events: SessionEvent[]; stored: StoredEvent[] }>;
}

const textSchema = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
};

/**
 * The same turns against every provider, through its official SDK and a fake of its API: what
 * Brain stores, what it sends, and how it retries, fails and stops.
 */
export function describeProviderConformance(adapter: ProviderAdapter): () => ProviderTestContext {
  let fake: FakeModelServer;
  let tools: ToolService;
  let brain: TestBrain;
  let client: BrainClient;
  let fastAnswered = 0;
  const fastWaiters: (() => void)[] = [];

  /** A model entry on the fake (started in beforeAll). */
  const model = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    provider: adapter.provider,
    model: "test-model",
    context_window: 128_000,
    api_key_env: "PROVIDER_KEY",
    base_url: adapter.baseUrl(fake.url),
    timeout_seconds: 5,
    max_retry_wait_seconds: 0.05,
    ...extra,
  });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    const closedUrl = `http://127.0.0.1:${await closedPort()}`;
    tools = await startToolService({
      "/echo": (call, res) =>
        sendJson(res, textResult(`echo:${(call.body.arguments as { text: string }).text}`)),
      "/slow": async (call, res) => {
        // answers only after a fast call has: possible only if both run at the same time
        if (fastAnswered < 1) await new Promise<void>((resolve) => fastWaiters.push(resolve));
        sendJson(res, textResult(`slow:${(call.body.arguments as { text: string }).text}`));
      },
      "/fast": (call, res) => {
        sendJson(res, textResult(`fast:${(call.body.arguments as { text: string }).text}`));
        fastAnswered += 1;
        for (const wake of fastWaiters.splice(0)) wake();
      },
      "/fail": (_call, res) =>
        sendJson(res, { content: [{ type: "text", text: "disk full" }], is_error: true }),
      "/weather": (_call, res) => sendJson(res, { structured_content: { city: "Oslo", celsius: -3 } }),
      "/image": (_call, res) =>
        sendJson(res, {
          content: [
            { type: "text", text: "a chart" },
            { type: "image", data: PNG_BASE64, mime_type: "image/png" },
            { type: "image", data: "Qk0eAAAAAAAAABoAAAAMAAAAAQABAAEAGAAAAP8A", mime_type: "image/bmp" },
          ],
        }),
    });
    const binding = (name: string) => ({
      name,
      description: `The ${name} tool.`,
      input_schema: textSchema,
      url: tools.at(`/${name}`),
      tenants: ["acme"],
    });
    brain = await startBrain(
      {
        models: [
          model("default"),
          model("patient", { max_retry_wait_seconds: 2 }),
          model("impatient", { timeout_seconds: 0.3, max_retries: 0 }),
          model("nowhere", { base_url: adapter.baseUrl(closedUrl), max_retries: 1 }),
          {
            name: "keyless",
            provider: adapter.provider,
            model: "test-model",
            context_window: 128_000,
            base_url: adapter.baseUrl(fake.url),
          },
        ],
        tools: ["echo", "slow", "fast", "fail", "weather", "image"].map(binding),
      },
      { env: { PROVIDER_KEY } },
    );
    client = brain.client();
  });

  afterAll(async () => {
    // nothing secret anywhere Brain wrote or tells, whatever the tests did
    expect(brain.logs()).not.toContain(PROVIDER_KEY);
    expect(await (await fetch(`${brain.url}/metrics`)).text()).not.toContain(PROVIDER_KEY);
    await brain?.stop();
    await tools?.close();
    await fake?.close();
  });

  const turn = async (config: Parameters<BrainClient["createSession"]>[0], message = "hi") => {
    const session = await client.createSession(config);
    const events = await runTurn(client, session.id, message);
    return { session, events, stored: await client.events(session.id) };
  };
  const lastRequests = (n: number) => fake.requests.slice(-n);

  describe(`${adapter.provider}: a turn`, () => {
    it("streams text live as model.delta and stores exactly that text, with usage and stop reason", async () => {
      const text = "Héllo, wörld — “quoted” \\ ✓ ünïcode split across reads";
      fake.enqueue(adapter.text(text, { input: 12, output: 7 }));
      const { events, stored } = await turn({ tools: ["echo", "fail"], system: "Be brief." });
      const deltas = ofType(events, "model.delta").map((e) => e.data.text);
      expect(deltas.length).toBeGreaterThan(5);
      expect(deltas.join("")).toBe(text);
      expect(stored.some((e) => e.type === ("model.delta" as string))).toBe(false);
      expect(ofType(stored, "message.assistant")[0]?.data).toEqual({
        text,
        tool_calls: [],
        stop_reason: "end_turn",
        usage: { input_tokens: 12, output_tokens: 7 },
      });
      expect(stored.at(-1)).toMatchObject({
        type: "turn.completed",
        data: { stop_reason: "end_turn", steps: 1, usage: { input_tokens: 12, output_tokens: 7 } },
      });

      const [request] = lastRequests(1);
      expect(adapter.key(request?.headers ?? {})).toBe(PROVIDER_KEY);
      expect(request?.body).toMatchObject({ model: "test-model", stream: true });
      expect(adapter.system(request?.body)).toBe("Be brief.");
      // exactly the session's enabled tools, as the binding describes them, and nothing else
      expect(adapter.tools(request?.body)).toEqual([
        { name: "echo", description: "The echo tool.", input_schema: textSchema },
        { name: "fail", description: "The fail tool.", input_schema: textSchema },
      ]);
      expect(adapter.transcript(request?.body)).toEqual(["user: hi"]);
    });

    it("sends parallel tool calls at once and gives the results back in the order asked, under the provider's ids", async () => {
      fake.enqueue(
        adapter.toolCalls(
          [
            { id: "prov_1", name: "slow", input: { text: "a" } },
            { id: "prov_2", name: "fast", input: { text: 'b "quoted" ✓' } },
          ],
          { text: "Checking both.", usage: { input: 20, output: 9 } },
        ),
        adapter.text("Both answered.", { input: 40, output: 3 }),
      );
      const { session, events, stored } = await turn({ tools: ["slow", "fast"] }, "check");

      const calls = ofType(stored, "tool.call").map((e) => e.data);
      expect(calls).toEqual([
        { call_id: expect.stringMatching(/^call_/), name: "slow", arguments: { text: "a" } },
        { call_id: expect.stringMatching(/^call_/), name: "fast", arguments: { text: 'b "quoted" ✓' } },
      ]);
      const assistant = ofType(stored, "message.assistant")[0]?.data;
      expect(assistant).toMatchObject({
        text: "Checking both.",
        stop_reason: "tool_use",
        tool_calls: [
          { call_id: calls[0]?.call_id, provider_call_id: "prov_1" },
          { call_id: calls[1]?.call_id, provider_call_id: "prov_2" },
        ],
      });
      // slow answered after fast: they ran at the same time
      expect(ofType(events, "tool.result").map((e) => e.data.name)).toEqual(["fast", "slow"]);
      expect(stored.at(-1)).toMatchObject({
        type: "turn.completed",
        data: { stop_reason: "end_turn", steps: 2, usage: { input_tokens: 60, output_tokens: 12 } },
      });

      const [, followUp] = lastRequests(2);
      expect(adapter.transcript(followUp?.body)).toEqual([
        "user: check",
        "assistant: Checking both.",
        'call prov_1 slow {"text":"a"}',
        'call prov_2 fast {"text":"b \\"quoted\\" ✓"}',
        "result prov_1: slow:a",
        'result prov_2: fast:b "quoted" ✓',
      ]);

      // the next turn carries the whole conversation, the same way
      fake.enqueue(adapter.text("Again."));
      await runTurn(client, session.id, "again");
      expect(adapter.transcript(lastRequests(1)[0]?.body)).toEqual([
        ...adapter.transcript(followUp?.body),
        "assistant: Both answered.",
        "user: again",
      ]);
    });

    it("marks error results as errors and gives structured_content as JSON text", async () => {
      fake.enqueue(
        adapter.toolCalls([
          { id: "prov_f", name: "fail", input: { text: "x" } },
          { id: "prov_w", name: "weather", input: { text: "Oslo" } },
          { id: "prov_n", name: "not_enabled", input: {} },
        ]),
        adapter.text("ok"),
      );
      await turn({ tools: ["fail", "weather"] });
      const results = adapter
        .transcript(lastRequests(1)[0]?.body)
        .filter((line) => line.startsWith("result"));
      expect(results).toEqual([
        "result prov_f (error): disk full",
        'result prov_w: {"city":"Oslo","celsius":-3}',
        expect.stringMatching(/^result prov_n \(error\): Tool call failed \(unknown_tool\)/),
      ]);
    });

    it("keeps arguments that are not JSON as the model wrote them, and the tool's schema refuses them", async () => {
      const before = tools.calls.length;
      const raw = '{"text": "unterminated';
      fake.enqueue(adapter.rawToolCall("prov_raw", "echo", raw), adapter.text("sorry"));
      const { stored } = await turn({ tools: ["echo"] });
      expect(ofType(stored, "tool.call")[0]?.data.arguments).toBe(raw);
      expect(ofType(stored, "tool.result")[0]?.data).toMatchObject({
        is_error: true,
        error: { code: "invalid_arguments" },
      });
      expect(tools.calls.length).toBe(before);
      expect(stored.at(-1)?.type).toBe("turn.completed");
    });

    it("fails a step that asks for more tool calls at once than Brain sends, sending none", async () => {
      const before = tools.calls.length;
      const many = Array.from({ length: 129 }, (_, i) => ({
        id: `m${i}`,
        name: "echo",
        input: { text: `${i}` },
      }));
      fake.enqueue(adapter.toolCalls(many));
      const { stored } = await turn({ tools: ["echo"] });
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "too_many_tool_calls", message: expect.stringContaining("129 tool calls") } },
      });
      expect(stored.map((e) => e.type)).not.toContain("tool.call");
      expect(tools.calls.length).toBe(before);
    });

    it("ends the turn at max_steps with the usage of every step summed", async () => {
      fake.enqueue(
        adapter.toolCalls([{ id: "p1", name: "echo", input: { text: "1" } }], {
          usage: { input: 3, output: 4 },
        }),
        adapter.toolCalls([{ id: "p2", name: "echo", input: { text: "2" } }], {
          usage: { input: 5, output: 6 },
        }),
      );
      const before = fake.requests.length;
      const { stored } = await turn({ tools: ["echo"], max_steps: 2 });
      expect(stored.at(-1)).toMatchObject({
        type: "turn.completed",
        data: { stop_reason: "max_steps", steps: 2, usage: { input_tokens: 8, output_tokens: 10 } },
      });
      expect(fake.requests.length - before).toBe(2);
    });

    it("records a usage reported out of bounds as whole counts that JSON holds, summed exactly", async () => {
      fake.enqueue(
        adapter.toolCalls([{ id: "p1", name: "echo", input: { text: "1" } }], {
          usage: { input: 1e308, output: -5 },
        }),
        adapter.toolCalls([{ id: "p2", name: "echo", input: { text: "2" } }], {
          usage: { input: 1e308, output: 2.5 },
        }),
      );
      const { stored } = await turn({ tools: ["echo"], max_steps: 2 });
      expect(ofType(stored, "message.assistant").map((event) => event.data.usage)).toEqual([
        { input_tokens: MAX_TOKEN_COUNT, output_tokens: 0 },
        { input_tokens: MAX_TOKEN_COUNT, output_tokens: 2 },
      ]);
      expect(stored.at(-1)).toMatchObject({
        type: "turn.completed",
        data: { steps: 2, usage: { input_tokens: 2 * MAX_TOKEN_COUNT, output_tokens: 2 } },
      });
    });

    it("sends no credential at all to a server configured without api_key_env", async () => {
      fake.enqueue(adapter.text("hi"));
      await turn({ model: "keyless" });
      const [request] = lastRequests(1);
      expect(request?.headers.authorization).toBeUndefined();
      expect(request?.headers["x-api-key"]).toBeUndefined();
    });
  });

  describe(`${adapter.provider}: the network`, () => {
    it("reaches the provider through HTTP_PROXY, and directly when NO_PROXY covers it", async () => {
      const proxy = await startForwardProxy();
      const through = async (env: Record<string, string>) => {
        const proxied = await startBrain(
          { models: [model("default")] },
          { env: { PROVIDER_KEY }, start: { env: { ...env, PROVIDER_KEY } } },
        );
        try {
          fake.enqueue(adapter.text("proxied"));
          const c = proxied.client();
          const session = await c.createSession({});
          const events = await runTurn(c, session.id, "hi");
          return events.at(-1)?.type;
        } finally {
          await proxied.stop();
        }
      };
      try {
        expect(await through({ HTTP_PROXY: proxy.url })).toBe("turn.completed");
        const fakeHost = new URL(fake.url).host;
        expect(proxy.carried.some((line) => line.includes(fakeHost))).toBe(true);
        const carried = proxy.carried.length;
        expect(await through({ HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" })).toBe("turn.completed");
        expect(proxy.carried.length).toBe(carried);
      } finally {
        await proxy.close();
      }
    });
  });

  describe(`${adapter.provider}: failures`, () => {
    it("retries a 429 after the retry-after it asks for", async () => {
      fake.enqueue(
        adapter.error(429, "rate_limit_error", "Too many requests", { "retry-after": "1" }),
        adapter.text("after the wait"),
      );
      const { stored } = await turn({ model: "patient" });
      const [limited, retried] = lastRequests(2);
      expect((retried?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(950);
      expect(ofType(stored, "message.assistant")[0]?.data.text).toBe("after the wait");
      expect(stored.at(-1)?.type).toBe("turn.completed");
    });

    it("retries a 5xx and a dropped stream with backoff, and stores only the complete answer", async () => {
      fake.enqueue(
        adapter.error(500, "api_error", "Internal server error"),
        adapter.cut("a partial answer that is"),
        adapter.text("the whole answer"),
      );
      const before = fake.requests.length;
      const { events, stored } = await turn({});
      expect(fake.requests.length - before).toBe(3);
      expect(ofType(stored, "message.assistant").map((e) => e.data.text)).toEqual(["the whole answer"]);
      await expect.poll(() => brain.logs()).toContain("model call failed, retrying");
      // the live text says which attempt it belongs to: the last attempt's is the stored answer
      const deltas = ofType(events, "model.delta").map((e) => e.data as { text: string; attempt: number });
      const textOf = (attempt: number) =>
        deltas
          .filter((d) => d.attempt === attempt)
          .map((d) => d.text)
          .join("");
      expect(textOf(2)).not.toBe("");
      expect("a partial answer that is".startsWith(textOf(2))).toBe(true);
      expect(textOf(3)).toBe("the whole answer");
      expect(deltas.map((d) => d.attempt)).toEqual([...deltas.map((d) => d.attempt)].sort());
    });

    it("retries a connection that drops before any answer", async () => {
      fake.enqueue((res) => {
        res.socket?.destroy();
      }, adapter.text("answered on the second connection"));
      const before = fake.requests.length;
      const { stored } = await turn({});
      expect(fake.requests.length - before).toBe(2);
      expect(stored.at(-1)?.type).toBe("turn.completed");
      expect(ofType(stored, "message.assistant").map((e) => e.data.text)).toEqual([
        "answered on the second connection",
      ]);
    });

    it("retries a provider nothing listens at, then fails the turn as unreachable", async () => {
      const { stored, session } = await turn({ model: "nowhere" });
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "provider_unreachable", message: expect.stringContaining("2 attempts") } },
      });
      const retried = new RegExp(`"session_id":"${session.id}".*model call failed, retrying`);
      await expect.poll(() => brain.logs()).toMatch(retried);
    });

    it("gives up after max_retries and fails the turn with the provider's message", async () => {
      fake.enqueue(
        ...[1, 2, 3].map(() => adapter.error(503, "api_error", "upstream is down for maintenance")),
      );
      const before = fake.requests.length;
      const { stored } = await turn({});
      expect(fake.requests.length - before).toBe(3);
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: {
          error: {
            code: "provider_server_error",
            message: expect.stringMatching(/503.*upstream is down for maintenance.*gave up after 3 attempts/),
          },
        },
      });
    });

    it("fails at once, without retrying, on a request the provider refuses", async () => {
      fake.enqueue(
        adapter.error(400, "invalid_request_error", "messages: text content blocks must be non-empty"),
      );
      const before = fake.requests.length;
      const { session, stored } = await turn({});
      expect(fake.requests.length - before).toBe(1);
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: {
          error: {
            code: "provider_rejected",
            message: expect.stringContaining("text content blocks must be non-empty"),
          },
        },
      });
      // a failed turn loses nothing: the session takes the next message
      fake.enqueue(adapter.text("fine now"));
      expect((await runTurn(client, session.id, "retry")).at(-1)?.type).toBe("turn.completed");
    });

    it("does not wait out a retry-after longer than max_retry_wait_seconds", async () => {
      fake.enqueue(adapter.error(429, "rate_limit_error", "Too many requests", { "retry-after": "30" }));
      const started = Date.now();
      const { stored } = await turn({});
      expect(Date.now() - started).toBeLessThan(2000);
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: {
          error: {
            code: "provider_rate_limited",
            message: expect.stringContaining("longer than max_retry_wait_seconds"),
          },
        },
      });
    });

    it("keeps the key out of events and logs when the provider echoes it back", async () => {
      fake.enqueue(
        adapter.error(401, "authentication_error", `Incorrect API key provided: ${PROVIDER_KEY}.`),
      );
      const { stored } = await turn({});
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "provider_auth_failed", message: expect.stringContaining("[redacted]") } },
      });
      expect(JSON.stringify(stored)).not.toContain(PROVIDER_KEY);
      expect(JSON.stringify(stored)).not.toContain(PROVIDER_KEY.slice(0, 12));
      expect(brain.logs()).not.toContain(PROVIDER_KEY);
    });

    it("aborts the model stream at once on interrupt", async () => {
      fake.enqueue(adapter.stall("Thinking about it"));
      const session = await client.createSession({});
      const signal = AbortSignal.timeout(5000);
      const stream = client.streamEvents(session.id, { signal });
      // subscribed before the message goes, so the live delta cannot slip past
      const next = stream.next();
      await client.sendMessage(session.id, "go");
      for (let seen = await next; seen.value?.type !== "model.delta"; seen = await stream.next()) {
        if (seen.done) throw new Error("the stream ended before a model.delta");
      }
      await stream.return(undefined);
      const [request] = lastRequests(1);
      const started = Date.now();
      await client.interrupt(session.id);
      await request?.closed;
      expect(Date.now() - started).toBeLessThan(1000);
      const stored: StoredEvent[] = await client.events(session.id);
      expect(stored.map((e) => e.type)).toEqual([
        "session.created",
        "message.user",
        "turn.started",
        "turn.interrupted",
      ]);
    });

    it("ends a wait between retries at once on interrupt", async () => {
      fake.enqueue(adapter.error(429, "rate_limit_error", "Too many requests", { "retry-after": "2" }));
      const session = await client.createSession({ model: "patient" });
      const before = fake.requests.length;
      await client.sendMessage(session.id, "go");
      // Brain logs the retry just before it starts to wait
      const waiting = new RegExp(`"session_id":"${session.id}".*model call failed, retrying`);
      while (!waiting.test(brain.logs())) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = Date.now();
      await client.interrupt(session.id);
      expect(Date.now() - started).toBeLessThan(500);
      expect((await client.events(session.id)).at(-1)?.type).toBe("turn.interrupted");
      expect(fake.requests.length - before).toBe(1);
    });

    it("fails a reply that grows past its bound instead of holding it all, and closes the stream", async () => {
      fake.enqueue(adapter.endless("x".repeat(64 * 1024)));
      const { stored } = await turn({});
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "provider_bad_response", message: expect.stringContaining("16 MiB") } },
      });
      // nothing of the reply was stored
      expect(stored.map((e) => e.type)).not.toContain("message.assistant");
      await lastRequests(1)[0]?.closed;
    });

    // each part of a call that Brain keeps counts toward the bound, wherever the provider puts it
    it.each(["id", "name", "input"] as const)(
      "fails a reply whose whole tool calls pass the bound in their %s, without retrying",
      async (part) => {
        const mib = "x".repeat(1024 * 1024);
        const calls = Array.from({ length: 20 }, (_, i) => ({
          id: part === "id" ? `${mib}${i}` : `call_${i}`,
          name: part === "name" ? `${mib}${i}` : "echo",
          input: { text: part === "input" ? mib : "x" },
        }));
        fake.enqueue(adapter.wholeCalls(calls));
        const before = fake.requests.length;
        const { stored } = await turn({ tools: ["echo"] });
        expect(stored.at(-1)).toMatchObject({
          type: "turn.failed",
          data: { error: { code: "provider_bad_response", message: expect.stringContaining("16 MiB") } },
        });
        expect(fake.requests.length - before).toBe(1);
      },
    );

    it("ends an attempt when the provider stays silent past timeout_seconds", async () => {
      fake.enqueue(adapter.stall("and then nothing"));
      const { stored } = await turn({ model: "impatient" });
      expect(stored.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "provider_timeout", message: expect.stringContaining("0.3 s") } },
      });
      await lastRequests(1)[0]?.closed;
    });
  });

  return () => ({ fake, brain, client, turn });
}
