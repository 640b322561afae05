import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient, StoredEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, refusal, waitForEvents } from "../helpers/turns.js";

let service: ToolService;
let brain: TestBrain;
let client: BrainClient;

const binding = (name: string) => service.binding(name);

beforeAll(async () => {
  service = await startToolService({
    // never answers: its turn runs until interrupted
    "/hang": () => {},
    "/ok": (_call, res) => sendJson(res, textResult("ok")),
  });
  brain = await startBrain({ limits: { max_queued_messages: 2 }, tools: [binding("hang")] });
  client = brain.client();
});
afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

/** A first turn that runs until interrupted (its tool never answers), then turns that echo their message. */
const slowFirst = () =>
  client.createSession({
    tools: ["hang"],
    script: [
      { tool_calls: [{ name: "hang", arguments: {} }] },
      { text: "echo: {{message}}" },
      { text: "echo: {{message}}" },
      { text: "echo: {{message}}" },
    ],
  });

const turnsEnded = (count: number) => (events: StoredEvent[]) =>
  events.filter((e) => ["turn.completed", "turn.failed", "turn.interrupted"].includes(e.type)).length >=
  count;

describe("a message while a turn runs", () => {
  it("is refused with 409 by default, and with on_busy reject", async () => {
    const session = await slowFirst();
    await client.sendMessage(session.id, "first");
    for (const onBusy of [undefined, "reject"] as const) {
      const refused = await refusal(client.sendMessage(session.id, "second", onBusy ? { onBusy } : {}));
      expect([refused.status, refused.code]).toEqual([409, "session_busy"]);
    }
    await client.interrupt(session.id);
  });

  it("waits in the session's queue with on_busy enqueue, each starting its turn when the one before ends", async () => {
    const session = await slowFirst();
    await client.sendMessage(session.id, "first", { onBusy: "enqueue" });
    expect(await client.sendMessage(session.id, "second", { onBusy: "enqueue" })).toEqual({ queued: 1 });
    expect(await client.sendMessage(session.id, "third", { onBusy: "enqueue" })).toEqual({ queued: 2 });
    const full = await refusal(client.sendMessage(session.id, "fourth", { onBusy: "enqueue" }));
    expect([full.status, full.code]).toEqual([409, "queue_full"]);

    // an interrupt ends the running turn; the queue then goes on
    await client.interrupt(session.id);
    const events = await waitForEvents(client, session.id, turnsEnded(3));
    const queued = ofType(events, "message.queued");
    expect(queued.map((e) => e.data.content)).toEqual(["second", "third"]);
    const users = ofType(events, "message.user");
    expect(users.map((e) => [e.data.content, e.data.queued_seq])).toEqual([
      ["first", undefined],
      ["second", queued[0]?.seq],
      ["third", queued[1]?.seq],
    ]);
    expect(ofType(events, "message.assistant").map((e) => e.data.text)).toEqual([
      "",
      "echo: second",
      "echo: third",
    ]);
    // each queued turn started in the same write as the end of the one before
    const third = users[2] as StoredEvent;
    expect(events.find((e) => e.seq === third.seq - 1)?.type).toBe("turn.completed");
    expect(events.find((e) => e.seq === third.seq + 1)?.type).toBe("turn.started");
    await waitForEvents(client, session.id, () => true);
    expect((await client.getSession(session.id)).status).toBe("idle");
  });

  it("starts its turn at once with on_busy enqueue when the session is idle", async () => {
    const session = await client.createSession();
    expect(await client.sendMessage(session.id, "now", { onBusy: "enqueue" })).toEqual({ seq: 2 });
    const events = await waitForEvents(client, session.id, turnsEnded(1));
    expect(ofType(events, "message.queued")).toHaveLength(0);
  });

  it("interrupts the running turn with on_busy interrupt, then starts its own", async () => {
    const session = await slowFirst();
    await client.sendMessage(session.id, "first");
    const sent = await client.sendMessage(session.id, "instead", { onBusy: "interrupt" });
    expect(sent).toHaveProperty("seq");
    const events = await waitForEvents(client, session.id, turnsEnded(2));
    const types = events.map((e) => e.type);
    expect(types.slice(2)).toEqual([
      "turn.started",
      "message.assistant",
      "tool.call",
      "tool.result",
      "turn.interrupted",
      "message.user",
      "turn.started",
      "message.assistant",
      "turn.completed",
    ]);
    expect(ofType(events, "message.assistant")[1]?.data.text).toBe("echo: instead");
  });

  it("is dropped with its queue when the session closes", async () => {
    const session = await slowFirst();
    await client.sendMessage(session.id, "first");
    await client.sendMessage(session.id, "queued", { onBusy: "enqueue" });
    await client.close(session.id);
    const events = await client.events(session.id);
    expect(events.at(-1)?.type).toBe("session.closed");
    expect(ofType(events, "message.user")).toHaveLength(1);
    const refused = await refusal(client.sendMessage(session.id, "late", { onBusy: "enqueue" }));
    expect(refused.code).toBe("session_closed");
  });
});

describe("a turn's token budget", () => {
  let tight: TestBrain;
  beforeAll(async () => {
    tight = await startBrain({ limits: { max_tokens_per_turn: 1000 }, tools: [binding("ok")] });
  });
  afterAll(async () => tight?.stop());

  it("ends the turn budget_exhausted, with its usage, before the model call that would pass it", async () => {
    const c = tight.client();
    const step = {
      tool_calls: [{ name: "ok", arguments: {} }],
      usage: { input_tokens: 60, output_tokens: 40 },
    };
    const session = await c.createSession({ tools: ["ok"], max_tokens: 150, script: Array(5).fill(step) });
    await c.sendMessage(session.id, "go");
    const events = await waitForEvents(c, session.id, turnsEnded(1));
    // 100 tokens after the first call, 200 after the second: no third
    expect(ofType(events, "message.assistant")).toHaveLength(2);
    expect(ofType(events, "tool.result")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "budget_exhausted" }, usage: { input_tokens: 120, output_tokens: 80 } },
    });
    expect((await c.getSession(session.id)).status).toBe("idle");
  });

  it("applies the host's limits.max_tokens_per_turn, and refuses a session budget above it", async () => {
    const c = tight.client();
    const step = {
      tool_calls: [{ name: "ok", arguments: {} }],
      usage: { input_tokens: 400, output_tokens: 100 },
    };
    const session = await c.createSession({ tools: ["ok"], script: Array(5).fill(step) });
    await c.sendMessage(session.id, "go");
    const events = await waitForEvents(c, session.id, turnsEnded(1));
    expect(ofType(events, "message.assistant")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "budget_exhausted" } },
    });
    const tooBig = await refusal(c.createSession({ max_tokens: 1001 }));
    expect([tooBig.status, tooBig.code]).toEqual([400, "invalid_request"]);
    expect(tooBig.message).toContain("limits.max_tokens_per_turn");
  });
});
