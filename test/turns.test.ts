import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient } from "../src/client/client.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { type StartedProcess, startEchoService } from "./helpers/processes.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { assertGapless, ofType, runTurn } from "./helpers/turns.js";

const TOKEN = "echo-token-0123456789";
let echo: StartedProcess & { ready: string };
let service: ToolService;
let brain: TestBrain;
let client: BrainClient;
/** What the /observe route saw in Brain's log when each call arrived. */
const observed: { call_id: unknown; storedBefore: boolean }[] = [];
let fastAnswered = 0;
const fastWaiters: (() => void)[] = [];

const textSchema = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
};

beforeAll(async () => {
  echo = await startEchoService(TOKEN);
  service = await startToolService({
    "/observe": async (call, res) => {
      const events = await client.events(String(call.body.session_id));
      observed.push({
        call_id: call.body.call_id,
        storedBefore: events.some((e) => e.type === "tool.call" && e.data.call_id === call.body.call_id),
      });
      sendJson(res, textResult("seen"));
    },
    "/slow": async (call, res) => {
      // answers only after two fast calls have: possible only if the calls run at the same time
      if (fastAnswered < 2) await new Promise<void>((resolve) => fastWaiters.push(resolve));
      sendJson(res, textResult(`slow:${(call.body.arguments as { text: string }).text}`));
    },
    "/fast": (call, res) => {
      sendJson(res, textResult(`fast:${(call.body.arguments as { text: string }).text}`));
      fastAnswered += 1;
      if (fastAnswered >= 2) for (const wake of fastWaiters.splice(0)) wake();
    },
  });
  const binding = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `${name} tool`,
    input_schema: textSchema,
    url,
    tenants: ["acme"],
    ...extra,
  });
  brain = await startBrain(
    {
      tools: [
        binding("echo", `${echo.ready}/tools/echo`, { token_env: "ECHO_TOKEN" }),
        binding("echo_wrong_token", `${echo.ready}/tools/echo`, { token_env: "WRONG_TOKEN" }),
        binding("observe", service.at("/observe")),
        binding("observe_loose", service.at("/observe"), { input_schema: { type: "object" } }),
        binding("slow", service.at("/slow")),
        binding("fast", service.at("/fast")),
      ],
    },
    { env: { ECHO_TOKEN: TOKEN, WRONG_TOKEN: "not-the-token" } },
  );
  client = brain.client();
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
  await echo?.stop();
});

/** A turn's results in the order its calls were asked for: calls sent together end in any order. */
const results = async (sessionId: string) => {
  const events = await client.events(sessionId);
  const asked = ofType(events, "tool.call").map((call) => call.data.call_id);
  return ofType(events, "tool.result")
    .map((result) => result.data)
    .sort((a, b) => asked.indexOf(a.call_id) - asked.indexOf(b.call_id));
};

describe("a turn with the example echo service (a real process)", () => {
  it("calls echo and gives the result back to the model", async () => {
    const session = await client.createSession({
      tools: ["echo"],
      script: [
        { tool_calls: [{ name: "echo", arguments: { text: "{{message}}" } }] },
        { text: "echo said {{result}}" },
      ],
    });
    const events = await runTurn(client, session.id, "hello");
    const call = events.find((e) => e.type === "tool.call");
    const result = events.find((e) => e.type === "tool.result");
    expect(call?.data).toEqual({
      call_id: expect.stringMatching(/^call_/),
      name: "echo",
      arguments: { text: "hello" },
    });
    expect(result?.data).toEqual({
      call_id: call?.data.call_id,
      name: "echo",
      is_error: false,
      content: [{ type: "text", text: "hello" }],
      duration_ms: expect.any(Number),
    });
    expect(events.filter((e) => e.type === "message.assistant").at(-1)?.data.text).toBe("echo said hello");
    expect(events.at(-1)).toMatchObject({
      type: "turn.completed",
      data: { stop_reason: "end_turn", steps: 2 },
    });
  });

  it("gets http_status without unknown outcome when the service refuses the token", async () => {
    const session = await client.createSession({
      tools: ["echo_wrong_token"],
      script: [{ tool_calls: [{ name: "echo_wrong_token", arguments: { text: "x" } }] }, { text: "ok" }],
    });
    await runTurn(client, session.id, "go");
    const [result] = await results(session.id);
    expect(result).toMatchObject({ is_error: true, unknown_outcome: false, error: { code: "http_status" } });
    expect(JSON.stringify(result)).not.toContain("not-the-token");
  });
});

describe("tool calls in a turn", () => {
  it("stores each tool.call before its request is sent", async () => {
    const session = await client.createSession({
      tools: ["observe"],
      script: [
        {
          tool_calls: [
            { name: "observe", arguments: { text: "a" } },
            { name: "observe", arguments: { text: "b" } },
          ],
        },
        { text: "ok" },
      ],
    });
    await runTurn(client, session.id, "go");
    const calls = (await client.events(session.id))
      .filter((e) => e.type === "tool.call")
      .map((e) => e.data.call_id);
    expect(observed.filter((o) => calls.includes(String(o.call_id)))).toEqual([
      { call_id: expect.any(String), storedBefore: true },
      { call_id: expect.any(String), storedBefore: true },
    ]);
  });

  it("sends calls asked together concurrently and gives results back in the order asked", async () => {
    const session = await client.createSession({
      tools: ["slow", "fast"],
      script: [
        {
          tool_calls: [
            { name: "fast", arguments: { text: "1" } },
            { name: "slow", arguments: { text: "2" } },
            { name: "fast", arguments: { text: "3" } },
          ],
        },
        { text: "last result: {{result}}" },
      ],
    });
    const events = await runTurn(client, session.id, "go");
    const callIds = events.filter((e) => e.type === "tool.call").map((e) => e.data.call_id);
    const resultIds = events.filter((e) => e.type === "tool.result").map((e) => e.data.call_id);
    // slow answers only once both fast calls have, so it can only succeed if they ran at the same
    // time; the order their results are stored in is a race between the answers in flight
    expect(resultIds).toHaveLength(3);
    const slow = events.find((e) => e.type === "tool.result" && e.data.call_id === callIds[1]);
    expect(slow?.type === "tool.result" && slow.data.is_error).toBe(false);
    // the model sees the results in the order it asked: the last one is the third call's
    expect(events.filter((e) => e.type === "message.assistant").at(-1)?.data.text).toBe(
      "last result: fast:3",
    );
  });

  it("answers a tool that is not enabled with unknown_tool, and bad arguments with invalid_arguments, sending nothing", async () => {
    const before = service.calls.length;
    const session = await client.createSession({
      tools: ["observe"],
      script: [
        {
          tool_calls: [
            { name: "slow", arguments: { text: "x" } },
            { name: "made_up", arguments: {} },
            { name: "observe", arguments: { text: 5 } },
          ],
        },
        { text: "ok" },
      ],
    });
    await runTurn(client, session.id, "go");
    const [notEnabled, unknown, invalid] = await results(session.id);
    expect(notEnabled).toMatchObject({
      is_error: true,
      unknown_outcome: false,
      error: { code: "unknown_tool" },
    });
    expect(unknown).toMatchObject({
      is_error: true,
      unknown_outcome: false,
      error: { code: "unknown_tool" },
    });
    expect(invalid).toMatchObject({
      is_error: true,
      unknown_outcome: false,
      error: { code: "invalid_arguments" },
    });
    expect(JSON.stringify(invalid?.content)).toContain("arguments.text");
    expect(service.calls.length).toBe(before);
  });

  it("takes identity from the session, never from the model's arguments", async () => {
    const smuggled = { text: "x", tenant_id: "globex", session_id: "ses_other", call_id: "call_forged" };
    const session = await client.createSession({
      tools: ["observe_loose"],
      script: [{ tool_calls: [{ name: "observe_loose", arguments: smuggled }] }, { text: "ok" }],
    });
    await runTurn(client, session.id, "go");
    const received = service.calls.at(-1);
    const [result] = await results(session.id);
    expect(received?.body).toEqual({
      tenant_id: "acme",
      session_id: session.id,
      call_id: result?.call_id,
      arguments: smuggled,
    });
  });

  it("ends the turn at max_steps with that stop reason", async () => {
    const loop = { tool_calls: [{ name: "echo", arguments: { text: "again" } }] };
    const session = await client.createSession({ tools: ["echo"], max_steps: 2, script: [loop, loop, loop] });
    const events = await runTurn(client, session.id, "go");
    expect(events.at(-1)).toMatchObject({
      type: "turn.completed",
      data: { stop_reason: "max_steps", steps: 2 },
    });
    expect(events.filter((e) => e.type === "tool.result")).toHaveLength(2);
  });

  it("fails the turn when the model fails, and when the script runs out", async () => {
    const failing = await client.createSession({ script: [{ error: "the model is down" }] });
    expect((await runTurn(client, failing.id, "go")).at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "model_error", message: "the model is down" } },
    });
    const short = await client.createSession({ script: [{ text: "only one" }] });
    await runTurn(client, short.id, "one");
    expect((await runTurn(client, short.id, "two")).at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "script_exhausted" } },
    });
    // a failed turn leaves the session ready for the next message
    expect((await client.getSession(short.id)).status).toBe("idle");
  });

  it("plays the model entry's script, and the session's script wins over it", async () => {
    const scripted = await startBrain({
      models: [{ name: "default", provider: "scripted", script: [{ text: "from the entry" }] }],
    });
    try {
      const c = scripted.client();
      const plain = await c.createSession();
      expect((await runTurn(c, plain.id, "x")).find((e) => e.type === "message.assistant")?.data.text).toBe(
        "from the entry",
      );
      const own = await c.createSession({ script: [{ text: "from the session" }] });
      expect((await runTurn(c, own.id, "x")).find((e) => e.type === "message.assistant")?.data.text).toBe(
        "from the session",
      );
    } finally {
      await scripted.stop();
    }
  });

  it("keeps seq gapless with many concurrent turns", async () => {
    const sessions = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.createSession({
          tools: ["echo"],
          script: [
            {
              tool_calls: [
                { name: "echo", arguments: { text: "a" } },
                { name: "echo", arguments: { text: "b" } },
              ],
            },
            { text: "ok" },
          ],
        }),
      ),
    );
    await Promise.all(sessions.map((s) => runTurn(client, s.id, "go")));
    for (const s of sessions) {
      const events = await client.events(s.id);
      assertGapless(events);
      expect(events.filter((e) => e.type === "tool.result")).toHaveLength(2);
    }
  });
});
