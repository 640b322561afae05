import type { ConversationMessage } from "../models/provider.js";
import type { MessageAssistantData, StoredEvent, ToolResultEventData } from "./events.js";

/**
 * Fold a session's stored events into the conversation a model sees. Tool results are grouped
 * under the assistant message that asked for them, in the order it asked.
 */
export function foldConversation(events: readonly StoredEvent[]): ConversationMessage[] {
  const messages: ConversationMessage[] = [];
  let pending: { order: string[]; results: Map<string, ToolResultEventData> } | undefined;
  const flush = () => {
    if (!pending) return;
    const results = pending.order.flatMap((id) => {
      const result = pending?.results.get(id);
      return result ? [result] : [];
    });
    if (results.length > 0) messages.push({ role: "tool", results });
    pending = undefined;
  };
  for (const event of events) {
    switch (event.type) {
      case "message.user":
        flush();
        messages.push({ role: "user", content: String(event.data.content) });
        break;
      case "message.assistant": {
        flush();
        const data = event.data as unknown as MessageAssistantData;
        messages.push({ role: "assistant", text: data.text, tool_calls: data.tool_calls });
        if (data.tool_calls.length > 0)
          pending = { order: data.tool_calls.map((call) => call.call_id), results: new Map() };
        break;
      }
      case "tool.result": {
        const data = event.data as unknown as ToolResultEventData;
        pending?.results.set(data.call_id, data);
        break;
      }
      default:
    }
  }
  flush();
  return messages;
}

/** The tool calls of the log that have no result yet: the ones a crash left unanswered. */
export function unansweredCalls(events: readonly StoredEvent[]): { call_id: string; name: string }[] {
  const open = new Map<string, { call_id: string; name: string }>();
  for (const event of events) {
    if (event.type === "tool.call") {
      open.set(String(event.data.call_id), {
        call_id: String(event.data.call_id),
        name: String(event.data.name),
      });
    } else if (event.type === "tool.result") {
      open.delete(String(event.data.call_id));
    }
  }
  return [...open.values()];
}
