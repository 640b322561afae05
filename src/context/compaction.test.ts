import { describe, expect, it } from "vitest";
import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import { ConversationFold } from "../turns/conversation.js";
import {
  COMPACTION_PROMPT,
  chooseCut,
  compactionMessages,
  leftOutNote,
  truncationNote,
} from "./compaction.js";
import type { ContextMeasure, HistoryEntry } from "./history.js";
import { ESTIMATE, type TokenCounter } from "./tokens.js";

const usage = { input_tokens: 0, output_tokens: 0 };
const measure: ContextMeasure = { counter: ESTIMATE, forModel: (result) => result };
/** One turn: a question, a step with a call and its result, an answer. */
const turn = (n: number): NewEvent[] => [
  { type: "message.user", data: { content: `question ${n}` } },
  { type: "turn.started", data: {} },
  {
    type: "message.assistant",
    data: {
      text: "",
      tool_calls: [{ call_id: `c${n}`, name: "echo", arguments: { text: "x" } }],
      stop_reason: "tool_use",
      usage,
    },
  },
  { type: "tool.call", data: { call_id: `c${n}`, name: "echo", arguments: { text: "x" } } },
  {
    type: "tool.result",
    data: {
      call_id: `c${n}`,
      name: "echo",
      is_error: false,
      content: [{ type: "text", text: "y" }],
      duration_ms: 1,
    },
  },
  {
    type: "message.assistant",
    data: { text: `answer ${n}`, tool_calls: [], stop_reason: "end_turn", usage },
  },
  { type: "turn.completed", data: { stop_reason: "end_turn", steps: 2, usage } },
];
const stored = (events: NewEvent[]): StoredEvent[] =>
  events.map((event, i) => ({ ...event, seq: i + 1, at: "2026-12-03T00:00:00.000Z" }) as StoredEvent);
const folded = (events: readonly StoredEvent[]) => {
  const fold = new ConversationFold(measure);
  for (const event of events) fold.push(event);
  return fold.history();
};
const roles = (entries: readonly HistoryEntry[]) => entries.map((entry) => entry.message.role).join(" ");

describe("chooseCut", () => {
  const log = stored([
    ...turn(1),
    ...turn(2),
    ...turn(3),
    { type: "message.user", data: { content: "now" } },
  ]);
  const entries = folded(log).entries();

  it("cuts only before a question, never past the latest, keeping what fits", () => {
    expect(roles(entries)).toBe(
      "user assistant tool assistant user assistant tool assistant user assistant tool assistant user",
    );
    // nothing to keep but the question under way: everything before it is summarised
    expect(chooseCut(entries, 0)).toBe(12);
    // room for everything: still at least the first turn goes
    expect(chooseCut(entries, 1_000_000)).toBe(4);
    for (let keep = 0; keep < 200; keep += 7) {
      const cut = chooseCut(entries, keep) as number;
      expect(entries[cut]?.message.role).toBe("user");
      expect(cut).toBeLessThanOrEqual(12);
    }
  });

  it("finds nothing to summarise in a first turn, or behind a lone summary", () => {
    expect(chooseCut(folded(stored(turn(1))).entries(), 0)).toBeUndefined();
    const history = folded(log);
    history.compact({
      strategy: "compact",
      summary: "s",
      through_seq: 14,
      usage,
      tokens_before: 0,
      tokens_after: 0,
    });
    expect(roles(history.entries())).toBe("summary user assistant tool assistant user");
    expect(chooseCut(history.entries(), 1_000_000)).toBe(5);
  });
});

describe("a compaction folded from the log", () => {
  const log = stored([...turn(1), ...turn(2), ...turn(3)]);

  it("replaces every message through its seq by the summary, which counts the steps it replaced", () => {
    const compacted: StoredEvent = {
      seq: log.length + 1,
      at: "2026-12-03T00:00:00.000Z",
      type: "context.compacted",
      data: {
        strategy: "compact",
        summary: "Two questions.",
        through_seq: 14,
        usage,
        tokens_before: 9,
        tokens_after: 3,
      },
    };
    const history = folded([...log, compacted]);
    expect(history.messages()[0]).toEqual({
      role: "summary",
      text: "The conversation before this point was summarised to fit the model's context window; the summary:\n\nTwo questions.",
      steps: 4,
    });
    expect(history.messages()[1]).toEqual({ role: "user", content: "question 3" });
    expect(history.steps()).toBe(6);
    // a later compaction replaces the earlier summary too
    const again = folded([
      ...log,
      compacted,
      ...stored(turn(4)).map((event) => ({ ...event, seq: event.seq + 22 })),
      { ...compacted, seq: 30, data: { ...compacted.data, summary: "Three.", through_seq: 22 } },
    ]);
    expect(roles(again.entries())).toBe("summary user assistant tool assistant");
    expect(again.steps()).toBe(8);
  });

  it("leaves a truncation's note in place of the turns it left out", () => {
    const entries = folded(log).entries().slice(0, 8);
    expect(truncationNote(entries)).toBe(
      "[2 earlier turns were left out here to fit the model's context window; the session's events keep them all.]",
    );
  });

  it("counts in a truncation's note the turns of the note or summary it replaces", () => {
    const note = (data: { strategy: "truncate" | "compact"; summary: string }, seq: number): StoredEvent => ({
      seq,
      at: "2026-12-03T00:00:00.000Z",
      type: "context.compacted",
      data: { ...data, through_seq: 14, usage, tokens_before: 0, tokens_after: 0 },
    });
    const later = stored([...turn(4), ...turn(5)]).map((event) => ({ ...event, seq: event.seq + 22 }));
    for (const earlier of [
      { strategy: "truncate" as const, summary: truncationNote(folded(log).entries().slice(0, 8)) },
      { strategy: "compact" as const, summary: "Two questions." },
    ]) {
      const entries = folded([...log, note(earlier, 22), ...later]).entries();
      expect(roles(entries.slice(0, 2))).toBe("summary user");
      // the earlier part's 2 turns, question 3's and question 4's
      expect(truncationNote(entries.slice(0, 9))).toBe(
        "[4 earlier turns were left out here to fit the model's context window; the session's events keep them all.]",
      );
    }
  });
});

describe("compactionMessages", () => {
  it("sends the messages as one transcript, leaving out the oldest that do not fit", () => {
    const entries = folded(stored([...turn(1), ...turn(2)])).entries();
    const whole = compactionMessages(entries, 100_000, ESTIMATE, ESTIMATE);
    expect(whole.left).toBe(0);
    expect(whole.messages[0]).toEqual({
      role: "user",
      content: expect.stringContaining(
        'User: question 1\n\nAssistant called echo with {"text":"x"}\n\nResult of echo: y\n\nAssistant: answer 1',
      ),
    });
    const [cut] = compactionMessages(entries, 200 + 20, ESTIMATE, ESTIMATE).messages;
    expect(cut?.role === "user" && cut.content).toMatch(
      /^\[\d+ older messages are left out here: they did not fit\]/,
    );
  });

  it("counts with the summarising model's counter, not the one the conversation was counted with", () => {
    const entries = folded(stored([...turn(1), ...turn(2), ...turn(3)])).entries();
    // a model whose tokenizer makes ten tokens of what the session's makes one: the oldest are left out
    const tenfold: TokenCounter = { family: "estimate", text: (text) => 10 * ESTIMATE.text(text) };
    const budget = tenfold.text(COMPACTION_PROMPT) + entries.reduce((sum, entry) => sum + entry.tokens, 0);
    expect(compactionMessages(entries, budget, ESTIMATE, ESTIMATE).left).toBe(0);
    const { messages, left } = compactionMessages(entries, budget, tenfold, ESTIMATE);
    expect(left).toBeGreaterThan(0);
    const sent = messages[0]?.role === "user" ? messages[0].content : "";
    expect(sent).toContain("Assistant: answer 3");
    expect(sent).toContain(`[${left} older messages are left out here: they did not fit]`);
    expect(leftOutNote(left)).toBe(
      `[This summary leaves out the ${left} oldest of the messages it replaces, which did not fit the summarising model's context window; the session's events keep them all.]`,
    );
  });
});
