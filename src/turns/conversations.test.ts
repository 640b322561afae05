import { describe, expect, it } from "vitest";
import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import type { ContextMeasure } from "../context/history.js";
import { ESTIMATE } from "../context/tokens.js";
import { SqliteStore } from "../store/sqlite.js";
import { ConversationFold } from "./conversation.js";
import { Conversations } from "./conversations.js";

const usage = { input_tokens: 0, output_tokens: 0 };
const call = (id: string) => ({ call_id: id, name: "echo", arguments: { text: id } });
const result = (id: string): NewEvent => ({
  type: "tool.result",
  data: { call_id: id, name: "echo", is_error: false, content: [{ type: "text", text: id }], duration_ms: 1 },
});
const assistant = (text: string, ids: string[] = []): NewEvent => ({
  type: "message.assistant",
  data: { text, tool_calls: ids.map(call), stop_reason: ids.length ? "tool_use" : "end_turn", usage },
});
/** One turn: the user's message, a step with parallel calls (results stored out of order), the answer. */
const turn = (n: number): NewEvent[] => [
  { type: "message.user", data: { content: `message ${n}` } },
  { type: "turn.started", data: {} },
  assistant("", [`a${n}`, `b${n}`]),
  { type: "tool.call", data: call(`a${n}`) },
  { type: "tool.call", data: call(`b${n}`) },
  result(`b${n}`),
  result(`a${n}`),
  assistant(`answer ${n}`),
  { type: "turn.completed", data: { stop_reason: "end_turn", steps: 2, usage } },
];
const stored = (events: NewEvent[]): StoredEvent[] =>
  events.map((event, i) => ({ ...event, seq: i + 1, at: "2026-12-03T00:00:00.000Z" }) as StoredEvent);

const measure: ContextMeasure = { counter: ESTIMATE, forModel: (result) => result };
const foldOf = (events: readonly StoredEvent[]) => {
  const fold = new ConversationFold(measure);
  for (const event of events) fold.push(event);
  return fold;
};
const messagesOf = (events: readonly StoredEvent[]) => foldOf(events).history().messages();

describe("ConversationFold", () => {
  it("groups results under the assistant message that asked, in the order asked", () => {
    expect(messagesOf(stored(turn(1)))).toEqual([
      { role: "user", content: "message 1" },
      { role: "assistant", text: "", tool_calls: [call("a1"), call("b1")] },
      { role: "tool", results: [result("a1").data, result("b1").data] },
      { role: "assistant", text: "answer 1", tool_calls: [] },
    ]);
  });

  it("folds a log in parts as it folds it whole, and its messages are the caller's to extend", () => {
    const log = stored([...turn(1), ...turn(2), ...turn(3)]);
    for (const cut of [1, 4, 6, 9, 14, 20]) {
      const fold = foldOf(log.slice(0, cut));
      const early = fold.history();
      early.push({ role: "user", content: "added by a turn" });
      for (const event of log.slice(cut)) fold.push(event);
      expect(fold.history().messages()).toEqual(messagesOf(log));
      expect(fold.lastSeq).toBe(log.length);
    }
  });
});

/** A real SQLite store with these sessions, counting the event rows read from it. */
async function countingStore(ids: string[]) {
  const store = new SqliteStore(":memory:");
  const counter = { rows: 0 };
  const readEvents = store.readEvents.bind(store);
  store.readEvents = async (...args) => {
    const rows = await readEvents(...args);
    counter.rows += rows.length;
    return rows;
  };
  for (const id of ids) {
    await store.createSession(
      {
        id,
        tenant_id: "t",
        created_at: "2026-12-03T00:00:00.000Z",
        config: { model: "default", tools: [], max_steps: 8, metadata: {} },
      },
      {
        type: "session.created",
        data: { config: { model: "default", tools: [], max_steps: 8, metadata: {} } },
      },
    );
  }
  return { store, counter };
}

describe("Conversations", () => {
  it("reads a session's log once, then at each turn start only what was stored since", async () => {
    const { store, counter } = await countingStore(["ses_c"]);
    const session = { id: "ses_c" };
    await store.append(session.id, [...turn(1), ...turn(2)]);
    const conversations = new Conversations(store);
    expect((await conversations.of(session.id, measure)).messages()).toHaveLength(8);
    expect(counter.rows).toBe(19);
    await store.append(session.id, turn(3));
    counter.rows = 0;
    const caughtUp = (await conversations.of(session.id, measure)).messages();
    expect(counter.rows).toBe(9);
    expect(caughtUp).toEqual(messagesOf(await store.readEvents(session.id, 0, 100)));
    await store.close();
  });

  it("keeps the most recently used sessions only, and reads an evicted one whole again", async () => {
    const { store, counter } = await countingStore(["ses_1", "ses_2", "ses_3"]);
    for (const id of ["ses_1", "ses_2", "ses_3"]) await store.append(id, turn(1));
    const conversations = new Conversations(store, { sessions: 2, bytes: 1_000_000 });
    for (const id of ["ses_1", "ses_2", "ses_1", "ses_3"]) await conversations.of(id, measure);
    counter.rows = 0;
    await conversations.of("ses_1", measure);
    expect(counter.rows).toBe(0);
    // ses_2 was the least recently used when ses_3 came
    await conversations.of("ses_2", measure);
    expect(counter.rows).toBe(10);
    await store.close();
  });

  it("keeps no more bytes of conversation than its bound: large sessions are read again instead", async () => {
    const { store, counter } = await countingStore(["ses_big", "ses_small"]);
    await store.append("ses_big", [{ type: "message.user", data: { content: "x".repeat(10_000) } }]);
    await store.append("ses_small", turn(1));
    const conversations = new Conversations(store, { sessions: 10, bytes: 5_000 });
    await conversations.of("ses_small", measure);
    const big = await conversations.of("ses_big", measure);
    expect(big.messages()).toEqual([{ role: "user", content: "x".repeat(10_000) }]);
    counter.rows = 0;
    // the small one is still kept; the big one, over the bound alone, was not
    await conversations.of("ses_small", measure);
    expect(counter.rows).toBe(0);
    await conversations.of("ses_big", measure);
    expect(counter.rows).toBe(2);
    await store.close();
  });

  it("pushes out the least recently used when the kept bytes pass the bound", async () => {
    const ids = ["ses_a", "ses_b", "ses_c"];
    const { store, counter } = await countingStore(ids);
    for (const id of ids)
      await store.append(id, [{ type: "message.user", data: { content: "y".repeat(6_000) } }]);
    const conversations = new Conversations(store, { sessions: 10, bytes: 15_000 });
    for (const id of ids) await conversations.of(id, measure);
    counter.rows = 0;
    for (const id of ["ses_c", "ses_b"]) await conversations.of(id, measure);
    expect(counter.rows).toBe(0);
    await conversations.of("ses_a", measure);
    expect(counter.rows).toBe(2);
    await store.close();
  });

  it("folds a turn's own events at its end and its next start's events as they are, reading nothing back", async () => {
    const { store, counter } = await countingStore(["ses_own"]);
    const session = { id: "ses_own" };
    const [user, started, ...rest] = turn(1) as [NewEvent, NewEvent, ...NewEvent[]];
    const start = await store.append(session.id, [user, started]);
    const conversations = new Conversations(store);
    await conversations.of(session.id, measure, start.ok ? start.events : []);
    const own = await store.append(session.id, rest);
    conversations.advance(session.id, own.ok ? own.events : []);
    const [user2, started2] = turn(2) as [NewEvent, NewEvent];
    const next = await store.append(session.id, [user2, started2]);
    counter.rows = 0;
    const history = await conversations.of(session.id, measure, next.ok ? next.events : []);
    expect(counter.rows).toBe(0);
    expect(history.messages()).toEqual(messagesOf(await store.readEvents(session.id, 0, 100)));
    await store.close();
  });

  it("reads on from where it was when someone else appended during the turn, or before its start", async () => {
    const { store, counter } = await countingStore(["ses_other"]);
    const session = { id: "ses_other" };
    const conversations = new Conversations(store);
    const [user, started, assistantAsks, callA, callB, resultB, resultA, ...end] = turn(1) as NewEvent[];
    const start = await store.append(session.id, [user as NewEvent, started as NewEvent]);
    await conversations.of(session.id, measure, start.ok ? start.events : []);
    const asked = await store.append(session.id, [assistantAsks, callA, callB] as NewEvent[]);
    // another writer's result between the turn's own appends (a takeover, say)
    await store.append(session.id, [resultB as NewEvent]);
    const rest = await store.append(session.id, [resultA, ...end] as NewEvent[]);
    conversations.advance(session.id, [...(asked.ok ? asked.events : []), ...(rest.ok ? rest.events : [])]);
    const [user2, started2] = turn(2) as [NewEvent, NewEvent];
    const next = await store.append(session.id, [user2, started2]);
    counter.rows = 0;
    const history = await conversations.of(session.id, measure, next.ok ? next.events : []);
    // all of turn 1 after its start, and turn 2's start: read, not taken from the turn
    expect(counter.rows).toBe(9);
    expect(history.messages()).toEqual(messagesOf(await store.readEvents(session.id, 0, 100)));
    // a start whose events do not follow on from the fold is read too
    await store.append(session.id, [{ type: "message.queued", data: { content: "later" } }]);
    const third = await store.append(session.id, turn(3).slice(0, 2));
    counter.rows = 0;
    await conversations.of(session.id, measure, third.ok ? third.events : []);
    expect(counter.rows).toBe(3);
    await store.close();
  });

  it("forgets a session's conversation when told (the session closed), and reads it whole if asked again", async () => {
    const { store, counter } = await countingStore(["ses_gone"]);
    await store.append("ses_gone", turn(1));
    const conversations = new Conversations(store);
    await conversations.of("ses_gone", measure);
    conversations.forget("ses_gone");
    counter.rows = 0;
    await conversations.of("ses_gone", measure);
    expect(counter.rows).toBe(10);
    await store.close();
  });
});
