import type {
  ContextCompactedData,
  MessageAssistantData,
  StoredEvent,
  ToolResultEventData,
} from "../../protocol/events.js";
import { ContextHistory, type ContextMeasure } from "../context/history.js";
import { packedMap } from "../packed.js";

/**
 * A session's stored events folded into the conversation a model sees, one event at a time, so a
 * session's next turn folds only what was stored since. Tool results are grouped under the
 * assistant message that asked for them, in the order it asked; a `context.compacted` replaces
 * the messages it summarised.
 */
export class ConversationFold {
  readonly #history: ContextHistory;
  #pending: { seq: number; order: string[]; results: Map<string, ToolResultEventData> } | undefined;
  /** The seq of the last event folded in. */
  lastSeq = 0;
  /** About how many bytes the folded conversation holds: what a cache of folds counts. */
  size = 0;

  constructor(readonly measure: ContextMeasure) {
    this.#history = new ContextHistory(measure);
  }

  push(event: StoredEvent): void {
    this.lastSeq = event.seq;
    if (FOLDED.has(event.type)) this.size += approximateSize(event.data);
    switch (event.type) {
      case "message.user":
        this.#flush();
        this.#history.push({ role: "user", content: String(event.data.content) }, event.seq);
        break;
      case "message.assistant": {
        this.#flush();
        const data = event.data as unknown as MessageAssistantData;
        this.#history.push({ role: "assistant", text: data.text, tool_calls: data.tool_calls }, event.seq);
        this.#history.report(data.usage);
        if (data.tool_calls.length > 0)
          this.#pending = {
            seq: event.seq + 1,
            order: packedMap(data.tool_calls, (call) => call.call_id),
            results: new Map(),
          };
        break;
      }
      case "tool.result": {
        const data = event.data as unknown as ToolResultEventData;
        this.#pending?.results.set(data.call_id, data);
        break;
      }
      case "context.compacted": {
        // a compaction is stored inside a turn, after its step's results: those are folded first
        this.#flush();
        this.#history.compact(event.data as unknown as ContextCompactedData);
        // what is left is about what the summary and the kept turns hold: the cache counts less
        this.size = Math.min(this.size, approximateSize(this.#history.messages()));
        break;
      }
      default:
    }
  }

  /**
   * The conversation so far, as a copy the caller may add to until it releases it or asks for the
   * next one (`ContextHistory.copy`).
   */
  history(): ContextHistory {
    const history = this.#history.copy();
    const pending = this.#pending;
    const results = this.#pendingResults();
    if (pending && results.length > 0) history.push({ role: "tool", results }, pending.seq);
    return history;
  }

  #pendingResults(): ToolResultEventData[] {
    const pending = this.#pending;
    if (!pending) return [];
    const results: ToolResultEventData[] = [];
    for (const id of pending.order) {
      const result = pending.results.get(id);
      if (result) results.push(result);
    }
    return results;
  }

  #flush(): void {
    const pending = this.#pending;
    const results = this.#pendingResults();
    if (pending && results.length > 0) this.#history.push({ role: "tool", results }, pending.seq);
    this.#pending = undefined;
  }
}

const FOLDED = new Set(["message.user", "message.assistant", "tool.result"]);

/** The size of a JSON value, about: its strings' lengths, and 8 bytes for anything else. */
function approximateSize(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object") return 8;
  let size = 8;
  if (Array.isArray(value)) {
    for (const item of value) size += approximateSize(item);
  } else {
    // for…in rather than Object.entries: no array of pairs per object, at every event folded
    for (const key in value) size += key.length + approximateSize((value as Record<string, unknown>)[key]);
  }
  return size;
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
