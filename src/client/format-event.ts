import type { SessionEvent } from "../../protocol/events.js";

const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const json = (value: unknown) => clip(JSON.stringify(value) ?? "");

function describe(event: SessionEvent): string {
  switch (event.type) {
    case "session.created": {
      const { config } = event.data;
      return `model=${config.model} tools=${config.tools.join(",") || "(none)"}`;
    }
    case "message.user":
    case "message.queued":
      return json(event.data.content);
    case "message.assistant": {
      const { text, tool_calls } = event.data;
      const calls = tool_calls.map((call) => `${call.name}(${json(call.arguments)})`);
      return [text ? json(text) : "", calls.length > 0 ? `calls ${calls.join(", ")}` : ""]
        .filter(Boolean)
        .join(" ");
    }
    case "tool.call":
      return `${event.data.name} ${json(event.data.arguments)} [${event.data.call_id}]`;
    case "tool.approval_requested":
      return `${event.data.name} ${json(event.data.arguments)} [${event.data.call_id}] waits for approval until ${event.data.expires_at}`;
    case "tool.approval":
      return `${event.data.expired ? "expired" : event.data.decision} [${event.data.call_id}]${event.data.reason ? ` ${json(event.data.reason)}` : ""}`;
    case "tool.progress":
      return `${event.data.name} ${json(event.data.data)}`;
    case "tool.result": {
      const result = event.data;
      const text = result.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join(" ");
      const status = result.is_error
        ? `error ${result.error?.code ?? ""}${result.unknown_outcome ? " (outcome unknown)" : ""}`
        : "ok";
      return `${result.name} ${status} → ${json(text || result.structured_content || "")} (${result.duration_ms} ms)`;
    }
    case "model.delta":
      return json(event.data.text);
    case "turn.completed": {
      const { stop_reason, steps, usage } = event.data;
      return `${stop_reason}, ${steps} steps, tokens in=${usage.input_tokens} out=${usage.output_tokens}`;
    }
    case "turn.failed":
      return `${event.data.error.code}: ${event.data.error.message}`;
    case "context.compacted": {
      const { strategy, through_seq, tokens_before, tokens_after } = event.data;
      return `${strategy} through seq ${through_seq}, tokens ${tokens_before} → ${tokens_after}`;
    }
    case "turn.interrupted":
      return event.data.reason;
    case "turn.started":
    case "session.closed":
      return "";
    default:
      // a type this client was built without (a newer Brain): its data as it came
      return json((event as { data?: unknown }).data);
  }
}

/** One readable line per event, for terminals: `   6 tool.result   echo ok → "hello" (0.8 ms)`. */
export function formatEvent(event: SessionEvent): string {
  const seq = "seq" in event ? String(event.seq).padStart(4) : "   ~";
  return `${seq} ${event.type.padEnd(18)} ${describe(event)}`.trimEnd();
}
