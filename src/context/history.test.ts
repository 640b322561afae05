import { describe, expect, it } from "vitest";
import { ContextHistory } from "./history.js";
import { ESTIMATE } from "./tokens.js";

const measure = { counter: ESTIMATE, forModel: <T>(result: T) => result };

function historyOf(messages: number): ContextHistory {
  const history = new ContextHistory(measure);
  for (let i = 0; i < messages; i++) history.push({ role: "user", content: `message ${i}` }, i + 1);
  return history;
}

const step = (i: number) => ({ role: "assistant" as const, text: `step ${i}`, tool_calls: [] });

describe("ContextHistory.copy", () => {
  // 20,000 messages: past the size at which V8 keeps an array as a large object
  for (const size of [0, 3, 100, 20_000]) {
    it(`gives a turn the conversation to add to, and the base back its own (${size} messages)`, () => {
      const base = historyOf(size);
      const before = [...base.messages()];
      const turn = base.copy();
      for (let i = 0; i < 100; i++) turn.push(step(i));
      expect(turn.messages()).toHaveLength(size + 100);
      expect(turn.messages().slice(0, size)).toEqual(before);
      expect(turn.messages().at(-1)).toEqual(step(99));
      expect(turn.entries()).toHaveLength(size + 100);
      expect(turn.steps()).toBe(100);
      turn.release();
      // the turn's messages are none of the base's, which goes on as the log has it
      expect(base.messages()).toEqual(before);
      expect(base.entries()).toHaveLength(size);
      expect(base.steps()).toBe(0);
      base.push({ role: "user", content: "next" }, size + 1);
      const next = base.copy();
      expect(next.messages()).toEqual([...before, { role: "user", content: "next" }]);
      expect(next.steps()).toBe(0);
    });
  }

  it("takes its messages back from a turn that was not released, at its next use", () => {
    const base = historyOf(5);
    const turn = base.copy();
    turn.push(step(0));
    // the session's next turn start catches the conversation up, then copies it
    base.push({ role: "user", content: "next" }, 6);
    expect(base.messages().map((message) => message.role)).toEqual([...Array(6).fill("user")]);
    const next = base.copy();
    expect(next.messages()).toHaveLength(6);
    expect(next.steps()).toBe(0);
    // the turn before reads and adds to them no more
    expect(() => turn.messages()).toThrow(/used after its turn ended or the session's next turn began/);
    expect(() => turn.push(step(1))).toThrow(/used after/);
    expect(() => turn.tokens(0)).toThrow(/used after/);
    expect(next.messages()).toHaveLength(6);
  });

  it("revokes a copy's copies with it: they add to the same arrays", () => {
    const base = historyOf(2);
    const turn = base.copy();
    turn.push(step(0));
    const inner = turn.copy();
    inner.push(step(1));
    expect(inner.messages()).toHaveLength(4);
    base.copy();
    expect(() => turn.messages()).toThrow(/used after/);
    expect(() => inner.push(step(2))).toThrow(/used after/);
    expect(base.messages()).toHaveLength(2);
  });

  it("leaves the base whole when its copy compacts into arrays of its own", () => {
    const base = historyOf(10);
    const turn = base.copy();
    turn.push(step(0), 11);
    turn.compact({
      strategy: "truncate",
      summary: "the first eight messages",
      through_seq: 8,
      usage: { input_tokens: 0, output_tokens: 0 },
      tokens_before: 0,
      tokens_after: 0,
    });
    expect(turn.messages().map((message) => message.role)).toEqual(["summary", "user", "user", "assistant"]);
    turn.push(step(1));
    turn.release();
    expect(base.messages()).toHaveLength(10);
    expect(base.messages().every((message) => message.role === "user")).toBe(true);
  });
});
