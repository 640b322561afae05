import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { ChatView } from "./chat-view.js";

const at = "2026-12-03T10:00:00.000Z";

function shown(events: SessionEvent[]): string {
  let out = "";
  const view = new ChatView((text) => {
    out += text;
  });
  for (const event of events) view.show(event);
  return out;
}

const delta = (text: string, attempt = 1): SessionEvent => ({
  type: "model.delta",
  at,
  data: { text, attempt },
});
const assistant = (seq: number, text: string): SessionEvent => ({
  seq,
  type: "message.assistant",
  at,
  data: { text, tool_calls: [], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } },
});

describe("ChatView", () => {
  it("writes streamed text as it comes, on one line, and not again when the stored message arrives", () => {
    expect(shown([delta("Hel"), delta("lo"), assistant(4, "Hello")])).toBe("brain › Hello\n");
    // a model call that never streamed is shown whole from its stored message
    expect(shown([assistant(4, "Hello")])).toBe("brain › Hello\n");
  });

  it("starts the text over when the model call is retried", () => {
    expect(shown([delta("Hal"), delta("Hello", 2), assistant(4, "Hello")])).toBe(
      "brain › Hal\n  (the model call was retried)\nbrain › Hello\n",
    );
  });

  it("shows a tool call, its progress and its result with outcome, unknown_outcome and duration", () => {
    const text = shown([
      {
        seq: 5,
        type: "tool.call",
        at,
        data: { call_id: "call_1", name: "deploy", arguments: { env: "prod" } },
      },
      { type: "tool.progress", at, data: { call_id: "call_1", name: "deploy", data: { pct: 50 } } },
      {
        seq: 6,
        type: "tool.result",
        at,
        data: {
          call_id: "call_1",
          name: "deploy",
          is_error: true,
          unknown_outcome: true,
          error: { code: "connection_lost", message: "the service went away" },
          content: [{ type: "text", text: "line 1\nline 2" }],
          duration_ms: 1520,
        },
      },
    ]);
    expect(text).toBe(
      [
        '  → deploy {"env":"prod"}',
        '    … {"pct":50}',
        "  ← deploy error connection_lost (unknown outcome: it may have run) · 1.5 s",
        "    line 1",
        "    line 2",
        "",
      ].join("\n"),
    );
  });

  it("shows an event of a type it has no form for as the generic line", () => {
    const future = { seq: 9, type: "tool.rewound", at, data: { call_id: "call_2" } };
    expect(shown([future as unknown as SessionEvent])).toBe('   9 tool.rewound       {"call_id":"call_2"}\n');
  });

  it("shows a call that waits for approval with the commands that answer it, and the answer", () => {
    const requested: SessionEvent = {
      seq: 5,
      type: "tool.approval_requested",
      at,
      data: { call_id: "call_1", name: "pay", arguments: { cents: 5 }, expires_at: at },
    };
    const answered = (data: {
      decision: "approve" | "deny";
      reason?: string;
      expired?: boolean;
    }): SessionEvent => ({
      seq: 6,
      type: "tool.approval",
      at,
      data: { call_id: "call_1", ...data },
    });
    expect(shown([requested])).toBe("  ? pay waits for your approval: /approve or /deny [reason] (call_1)\n");
    expect(shown([answered({ decision: "approve" })])).toBe("  ✓ approved\n");
    expect(shown([answered({ decision: "deny", reason: "too much" })])).toBe("  ✗ denied: too much\n");
    expect(shown([answered({ decision: "deny", expired: true })])).toBe("  ✗ nobody answered in time\n");
  });
});
