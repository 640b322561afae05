import type { ScriptedStep } from "../config/schema.js";
import type { MessageAssistantData, StoredEvent, TurnEndedWithErrorData } from "../sessions/events.js";

/** A stored session as the scripted model can play it back. */
export interface Recording {
  /** One step per model call that answered, in order: a `scripted` model's script. */
  script: ScriptedStep[];
  /** The user messages, in order: send them to a session with the script to replay it. */
  messages: string[];
  /** What a replay will not reproduce, for people. */
  notes: string[];
}

const TEMPLATE = /\{\{(message|result)\}\}/;

/**
 * The stop reason of the step a recording puts where a turn failed or was interrupted: the
 * replayed turn ends there with an empty answer, and the next turn plays its own steps.
 */
export const RECORDED_END_STOP_REASON = "recorded_turn_ended";

/**
 * Record a session's model steps from its events: text, tool calls (with their arguments as the
 * model gave them), stop reason and usage, so that the scripted model replays the same
 * conversation against the tools as they are now — without a key or a network.
 */
export function recordSession(events: readonly StoredEvent[]): Recording {
  const script: ScriptedStep[] = [];
  const messages: string[] = [];
  const notes: string[] = [];
  for (const event of events) {
    if (event.type === "message.user") messages.push(String(event.data.content));
    if (event.type === "message.assistant") {
      const data = event.data as unknown as MessageAssistantData;
      script.push(stepOf(data));
      if (TEMPLATE.test(JSON.stringify([data.text, data.tool_calls]))) {
        notes.push(
          `step ${script.length} contains {{message}} or {{result}}: the scripted model fills them in when it replays`,
        );
      }
    }
    if (event.type === "turn.failed" || event.type === "turn.interrupted") {
      // The scripted model picks its step by the number of answers so far, and the model call
      // that failed (or never came) left none: without this step the next turn would play it.
      script.push({ stop_reason: RECORDED_END_STOP_REASON });
      const error = (event.data as unknown as Partial<TurnEndedWithErrorData>).error;
      notes.push(
        `turn ${messages.length} ${event.type === "turn.failed" ? `failed (${error?.code ?? "unknown"})` : "was interrupted"}: a replay ends it there with an empty answer (step ${script.length})`,
      );
    }
  }
  return { script, messages, notes };
}

function stepOf(data: MessageAssistantData): ScriptedStep {
  const calls = data.tool_calls.map((call) => ({ name: call.name, arguments: call.arguments }));
  const usual = calls.length > 0 ? "tool_use" : "end_turn";
  return {
    ...(data.text !== "" && { text: data.text }),
    ...(calls.length > 0 && { tool_calls: calls }),
    ...(data.stop_reason !== usual && { stop_reason: data.stop_reason }),
    ...((data.usage.input_tokens > 0 || data.usage.output_tokens > 0) && { usage: data.usage }),
  };
}
