import type { SessionEvent } from "../../protocol/events.js";
import { formatEvent } from "../client/format-event.js";

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const json = (value: unknown, max = 200) => clip(JSON.stringify(value) ?? "", max);
/** A tool result's text shown under its call: the first lines, as a person skims them. */
const RESULT_LINES = 6;

export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A session's events as a chat in a terminal: what the person and the model wrote, the model's text
 * as it streams, and each tool call with its arguments, progress and result. Pure: it writes text
 * through `write` and keeps only where the streamed text is.
 */
export class ChatView {
  /** The attempt whose text is being written, while the model's text streams. */
  #streaming: number | undefined;

  constructor(private readonly write: (text: string) => void) {}

  show(event: SessionEvent): void {
    const streamed = event.type !== "model.delta" && this.#endStream();
    const text = this.#text(event, streamed);
    if (text) this.write(text);
  }

  #text(event: SessionEvent, streamed: boolean): string | undefined {
    switch (event.type) {
      case "session.created": {
        const { config } = event.data;
        return `model ${config.model} · tools: ${config.tools.join(", ") || "none"}\n`;
      }
      case "message.user":
        return `you › ${event.data.content}\n`;
      case "turn.started":
      case "turn.completed":
        return undefined;
      case "model.delta":
        return this.#delta(event.data.text, event.data.attempt);
      case "message.assistant":
        // the answer whole, unless its text just streamed; its tool calls follow as tool.call
        return !streamed && event.data.text ? `brain › ${event.data.text}\n` : undefined;
      case "tool.call":
        return `  → ${event.data.name} ${json(event.data.arguments)}\n`;
      case "tool.approval_requested":
        return `  ? ${event.data.name} waits for your approval: /approve or /deny [reason] (${event.data.call_id})\n`;
      case "tool.approval": {
        const { decision, reason, expired } = event.data;
        const said = expired ? "nobody answered in time" : decision === "approve" ? "approved" : "denied";
        return `  ${decision === "approve" ? "✓" : "✗"} ${said}${reason ? `: ${reason}` : ""}\n`;
      }
      case "message.queued":
        return `you › ${event.data.content} (queued)\n`;
      case "tool.progress":
        return `    … ${typeof event.data.data === "string" ? clip(event.data.data, 200) : json(event.data.data)}\n`;
      case "tool.result": {
        const result = event.data;
        const outcome = result.is_error ? `error ${result.error?.code ?? ""}`.trimEnd() : "ok";
        const unknown = result.unknown_outcome ? " (unknown outcome: it may have run)" : "";
        const text = result.content.flatMap((item) =>
          item.type === "text" ? [item.text] : [`[${item.type}]`],
        );
        const lines = text.join("\n").split("\n").filter(Boolean);
        const more = lines.length > RESULT_LINES ? [`… ${lines.length - RESULT_LINES} more lines`] : [];
        return [
          `  ← ${result.name} ${outcome}${unknown} · ${duration(result.duration_ms)}\n`,
          ...[...lines.slice(0, RESULT_LINES), ...more].map((line) => `    ${clip(line, 200)}\n`),
        ].join("");
      }
      case "turn.interrupted":
        return `  (interrupted: ${event.data.reason})\n`;
      case "turn.failed":
        return `  (turn failed: ${event.data.error.code}: ${event.data.error.message})\n`;
      case "session.closed":
        return "session closed\n";
      default:
        // a type this view has no form for yet: the generic line says what it is
        return `${formatEvent(event)}\n`;
    }
  }

  #delta(text: string, attempt: number): string {
    const start =
      this.#streaming === undefined
        ? "brain › "
        : attempt > this.#streaming
          ? "\n  (the model call was retried)\nbrain › "
          : "";
    this.#streaming = attempt;
    return start + text;
  }

  /** Ends a streamed text's line; true when text had streamed. */
  #endStream(): boolean {
    const streamed = this.#streaming !== undefined;
    if (streamed) this.write("\n");
    this.#streaming = undefined;
    return streamed;
  }
}
