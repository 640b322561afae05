import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { ChatState } from "./chat-state.js";

const at = "2026-12-06T10:00:00.000Z";
const usage = { input_tokens: 1, output_tokens: 1 };
let seq = 0;
const stored = (type: string, data: unknown) => ({ seq: ++seq, type, at, data }) as SessionEvent;
const started = () => stored("turn.started", {});
const asked = (call_id: string) =>
  stored("tool.approval_requested", { call_id, name: "pay", arguments: {}, expires_at: at });

function followed(events: SessionEvent[]): ChatState {
  const state = new ChatState();
  for (const event of events) state.follow(event);
  return state;
}

describe("ChatState", () => {
  it("knows the calls that wait for a person from a history read before the stream", () => {
    const state = followed([started(), asked("call_a"), asked("call_b")]);
    expect(state.running).toBe(true);
    expect([...state.waiting]).toEqual(["call_a", "call_b"]);
    // an answer, or a result, takes a call off the list
    state.follow(stored("tool.approval", { call_id: "call_a", decision: "approve" }));
    state.follow(stored("tool.result", { call_id: "call_b", name: "pay", outcome: "error" }));
    expect(state.waiting.size).toBe(0);
  });

  it("has no turn running once the history ends one, whatever the session's status said before", () => {
    const state = followed([started()]);
    const ended = state.follow(stored("turn.completed", { stop_reason: "end_turn", steps: 1, usage }));
    expect(ended).toBe(true);
    expect(state.running).toBe(false);
    expect(state.follow(started())).toBe(false);
    expect(state.running).toBe(true);
  });
});
