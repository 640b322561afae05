import { describe, expect, it } from "vitest";
import { ContextHistory } from "./history.js";
import { ESTIMATE } from "./tokens.js";

const measure = { counter: ESTIMATE, forModel: <T>(result: T) => result };

function historyOf(messages: number): ContextHistory {
  const history = new ContextHistory(measure);
  for (let i = 0; i < messages; i++) history.push({ role: "user", content: `message ${i}` }, i + 1);
  return history;
}

describe("ContextHistory.copy", () => {
  // 20,000 messages: past the size at which V8 keeps an array as a large object
  for (const size of [0, 3, 100, 20_000]) {
    it(`gives a turn its own conversation to add to (${size} messages)`, () => {
      const base = historyOf(size);
      const turn = base.copy();
      for (let i = 0; i < 100; i++) turn.push({ role: "assistant", text: `step ${i}`, tool_calls: [] });
      expect(turn.messages()).toHaveLength(size + 100);
      expect(turn.messages().slice(0, size)).toEqual(base.messages());
      expect(turn.messages().at(-1)).toEqual({ role: "assistant", text: "step 99", tool_calls: [] });
      expect(turn.entries()).toHaveLength(size + 100);
      expect(turn.steps()).toBe(100);
      // the copy's messages are none of the base's, which goes on as the log has it
      expect(base.messages()).toHaveLength(size);
      expect(base.entries()).toHaveLength(size);
      expect(base.steps()).toBe(0);
      base.push({ role: "user", content: "next" }, size + 1);
      expect(base.messages().at(-1)).toEqual({ role: "user", content: "next" });
      expect(turn.messages()).toHaveLength(size + 100);
    });
  }
});
