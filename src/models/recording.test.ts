import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../protocol/events.js";
import { RECORDED_END_STOP_REASON, recordSession } from "./recording.js";
import { compareReplay } from "./replay-diff.js";

let seq = 0;
// events a recording reads: only the fields it reads matter, so the data is left loose
const event = (type: StoredEvent["type"], data: Record<string, unknown> = {}): StoredEvent =>
  ({ seq: ++seq, type, at: new Date(0).toISOString(), data }) as StoredEvent;
const assistant = (text: string, tool_calls: unknown[] = []) =>
  event("message.assistant", {
    text,
    tool_calls,
    stop_reason: tool_calls.length > 0 ? "tool_use" : "end_turn",
    usage: { input_tokens: 0, output_tokens: 0 },
  });

describe("recordSession", () => {
  it("notes what a replay cannot reproduce: failed and interrupted turns, and template markers", () => {
    const recording = recordSession([
      event("session.created"),
      event("message.user", { content: "one" }),
      event("turn.failed", { error: { code: "provider_overloaded", message: "x" } }),
      event("message.user", { content: "two" }),
      assistant("say {{result}} literally"),
      event("turn.completed"),
      event("message.user", { content: "three" }),
      event("turn.interrupted", { reason: "interrupted" }),
    ]);
    expect(recording).toEqual({
      script: [
        { stop_reason: RECORDED_END_STOP_REASON },
        { text: "say {{result}} literally" },
        { stop_reason: RECORDED_END_STOP_REASON },
      ],
      messages: ["one", "two", "three"],
      notes: [
        "turn 1 failed (provider_overloaded): a replay ends it there with an empty answer (step 1)",
        "step 2 contains {{message}} or {{result}}: the scripted model fills them in when it replays",
        "turn 3 was interrupted: a replay ends it there with an empty answer (step 3)",
      ],
    });
  });
});

describe("compareReplay", () => {
  it("ignores ids, durations, key order and the sessions' own events, and finds the rest", () => {
    const call = (id: string) => ({
      call_id: id,
      provider_call_id: `p_${id}`,
      name: "t",
      arguments: { a: 1, b: 2 },
    });
    const recorded = [
      event("session.created", { config: { model: "claude" } }),
      event("message.user", { content: "go" }),
      assistant("", [call("call_1")]),
      event("tool.result", { call_id: "call_1", name: "t", is_error: false, content: [], duration_ms: 5 }),
      event("session.closed"),
    ];
    const replayed = [
      event("session.created", { config: { model: "replay" } }),
      event("message.user", { content: "go" }),
      assistant("", [{ ...call("call_2"), arguments: { b: 2, a: 1 } }]),
      event("tool.result", { call_id: "call_2", name: "t", is_error: true, content: [], duration_ms: 9 }),
    ];
    expect(compareReplay(recorded, replayed)).toEqual([
      {
        index: 2,
        recorded: { type: "tool.result", data: { name: "t", is_error: false, content: [] } },
        replayed: { type: "tool.result", data: { name: "t", is_error: true, content: [] } },
      },
    ]);
  });
});
