import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../protocol/events.js";
import { contextMeasure } from "../context/measure.js";
import { lastStep, unsentRefusal } from "./approvals.js";
import { waitingTurn } from "./resume.js";

const measure = await contextMeasure(undefined, new Map());

let seq = 0;
const at = "2026-12-03T00:00:00.000Z";
const event = (type: string, data: unknown) => ({ seq: ++seq, type, at, data }) as unknown as StoredEvent;
const usage = { input_tokens: 10, output_tokens: 5 };
const call = (id: string) => ({ call_id: id, name: "t", arguments: {} });

/** A turn of two steps whose second asked for four calls: free, approved, denied, and one that waits. */
function log(): StoredEvent[] {
  seq = 0;
  return [
    event("session.created", { config: { model: "m", tools: [], max_steps: 4, metadata: {} } }),
    event("message.user", { content: "go" }),
    event("turn.started", {}),
    event("message.assistant", { text: "", tool_calls: [call("c0")], stop_reason: "tool_use", usage }),
    event("tool.call", call("c0")),
    event("tool.result", { call_id: "c0", name: "t", content: [], is_error: false, duration_ms: 1 }),
    event("message.assistant", {
      text: "four",
      tool_calls: ["free", "yes", "no", "wait"].map(call),
      stop_reason: "tool_use",
      usage,
    }),
    ...["free", "yes", "no", "wait"].map((id) => event("tool.call", call(id))),
    ...["yes", "no", "wait"].map((id) =>
      event("tool.approval_requested", { ...call(id), expires_at: "2030-01-01T00:00:00Z" }),
    ),
    event("tool.approval", { call_id: "yes", decision: "approve" }),
    event("tool.approval", { call_id: "no", decision: "deny", reason: "no" }),
  ];
}

describe("a turn left waiting for approval", () => {
  it("is picked up at its open step: the conversation before it, its usage and steps, and which calls may have been sent", () => {
    const waiting = waitingTurn(log(), measure);
    expect(waiting?.open).toMatchObject({
      step: 2,
      usage: { input_tokens: 20, output_tokens: 10 },
      text: "four",
    });
    expect(waiting?.history.messages().map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    // the call without approval and the approved one may have gone out; the denied one never did
    expect(waiting?.maybeSent.map((c) => c.call_id)).toEqual(["free", "yes"]);
    expect([...(waiting?.open.answers.keys() ?? [])]).toEqual(["yes", "no"]);
  });

  it("counts the turn's compactions in its usage, as the turn that made them did", () => {
    const events = log();
    // a compaction stored before the second step's model call
    const compacted = event("context.compacted", {
      strategy: "compact",
      summary: "s",
      through_seq: 3,
      usage: { input_tokens: 100, output_tokens: 7 },
      tokens_before: 900,
      tokens_after: 300,
    });
    events.splice(6, 0, compacted);
    for (const [i, renumbered] of events.entries()) Object.assign(renumbered, { seq: i + 1 });
    expect(waitingTurn(events, measure)?.open.usage).toEqual({ input_tokens: 120, output_tokens: 17 });
  });

  it("is not picked up once no call waits", () => {
    const events = log();
    events.push(event("tool.approval", { call_id: "wait", decision: "deny", expired: true }));
    expect(waitingTurn(events, measure)).toBeUndefined();
  });

  it("gives each unsent call its refusal when the turn ends, and none to a call that may have been sent", () => {
    const step = lastStep(log());
    expect(unsentRefusal(step, "free")).toBeUndefined();
    expect(unsentRefusal(step, "yes")).toBeUndefined();
    expect(unsentRefusal(step, "no")?.toResult()).toMatchObject({ error: { code: "denied" } });
    const waited = unsentRefusal(step, "wait")?.toResult();
    expect(waited).toMatchObject({ error: { code: "cancelled" } });
    expect(waited?.unknown_outcome).not.toBe(true);
  });
});
