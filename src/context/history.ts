import type { ContextCompactedData, ToolResultEventData } from "../../protocol/events.js";
import type { ConversationMessage, Usage } from "../models/provider.js";
import { messageTokens, type TokenCounter } from "./tokens.js";

/** How a session's conversation is measured and cut for its model. */
export interface ContextMeasure {
  counter: TokenCounter;
  /** What the model is sent of a result (a binding's max_model_bytes). */
  forModel: (result: ToolResultEventData) => ToolResultEventData;
}

export interface HistoryEntry {
  message: ConversationMessage;
  /**
   * The seq of the event the message starts at; a compaction through that seq replaces it. A
   * message of the running turn not yet folded from the log has none (it is never replaced).
   */
  seq: number;
  tokens: number;
}

const UNSTORED = Number.MAX_SAFE_INTEGER;
/**
 * The room a turn's copy of the conversation has for its messages before it is reallocated: 32
 * steps. Filled, not holes: an array made with holes stays of V8's holey kind, and code that reads
 * the conversation would then meet two kinds of array.
 */
const ROOM: readonly undefined[] = Array.from({ length: 64 }, () => undefined);

/**
 * The conversation a model is sent, message by message with each one's tokens, and what the
 * provider last reported of its size. Its size is the provider's count through the last message it
 * answered plus the estimate of what came after, kept as running sums so a turn start costs the
 * same early in a session as late.
 */
export class ContextHistory {
  #entries: HistoryEntry[] = [];
  /** The entries' messages, kept beside them: a model call reads them without a copy. */
  #messages: ConversationMessage[] = [];
  /** Every model step the entries hold, those a summary replaced included. */
  #steps = 0;
  #tokens = 0;
  /** The provider's count of the conversation through the message it last wrote, and `#tokens` then. */
  #reported: { tokens: number; estimated: number } | undefined;
  /** The usage of a model call whose answer is pushed next, within a turn. */
  #answered: Usage | undefined;

  constructor(readonly measure: ContextMeasure) {}

  /** A copy to add a turn's messages to, leaving this one as the log has it. */
  copy(): ContextHistory {
    const copy = new ContextHistory(this.measure);
    copy.#entries = withRoom(this.#entries);
    copy.#messages = withRoom(this.#messages);
    copy.#steps = this.#steps;
    copy.#tokens = this.#tokens;
    copy.#reported = this.#reported;
    return copy;
  }

  push(message: ConversationMessage, seq = UNSTORED): void {
    const sent =
      message.role === "tool"
        ? { role: "tool" as const, results: message.results.map(this.measure.forModel) }
        : message;
    const tokens = messageTokens(this.measure.counter, sent);
    this.#entries.push({ message: sent, seq, tokens });
    this.#messages.push(sent);
    if (sent.role === "assistant") this.#steps++;
    else if (sent.role === "summary") this.#steps += sent.steps;
    this.#tokens += tokens;
    if (message.role === "assistant" && this.#answered) {
      this.report(this.#answered);
      this.#answered = undefined;
    }
  }

  /** The usage of the call whose answer is the next assistant message pushed: reported once it is. */
  answered(usage: Usage): void {
    this.#answered = usage;
  }

  /** The provider's usage of the call that wrote the last message: its count of everything through it. */
  report(usage: Usage): void {
    const tokens = usage.input_tokens + usage.output_tokens;
    if (tokens > 0) this.#reported = { tokens, estimated: this.#tokens };
  }

  /** The conversation's tokens with `overhead` (system prompt and tools), and with `extra` messages after it. */
  tokens(overhead: number, extra: readonly ConversationMessage[] = []): number {
    let more = 0;
    for (const message of extra) more += messageTokens(this.measure.counter, message);
    const reported = this.#reported;
    if (!reported) return overhead + this.#tokens + more;
    return reported.tokens + (this.#tokens - reported.estimated) + more;
  }

  entries(): readonly HistoryEntry[] {
    return this.#entries;
  }

  /** The conversation as the model is sent it; it changes as the history does, so read it, keep a copy. */
  messages(): readonly ConversationMessage[] {
    return this.#messages;
  }

  /** Every model step the conversation holds, those a summary replaced included. */
  steps(): number {
    return this.#steps;
  }

  /** Replace every message up to the compaction's `through_seq` by its summary. */
  compact(data: ContextCompactedData): void {
    const cut = this.#entries.findIndex((entry) => entry.seq > data.through_seq);
    const end = cut === -1 ? this.#entries.length : cut;
    let steps = 0;
    let dropped = 0;
    for (const { message, tokens } of this.#entries.slice(0, end)) {
      if (message.role === "assistant") steps++;
      else if (message.role === "summary") steps += message.steps;
      dropped += tokens;
    }
    const summary: ConversationMessage = { role: "summary", text: summaryText(data), steps };
    const tokens = messageTokens(this.measure.counter, summary);
    this.#entries = [{ message: summary, seq: data.through_seq, tokens }, ...this.#entries.slice(end)];
    this.#messages = this.#entries.map((entry) => entry.message);
    this.#tokens += tokens - dropped;
    // the provider's count covered what is gone: from here on the estimate stands alone
    this.#reported = undefined;
  }
}

/**
 * A copy of `items` with room for a turn's messages after them. A copy made to fit exactly is
 * reallocated by the first push, and V8 reallocates an array of more than about 16,000 entries
 * (a large object) slowly: that one push cost 0.7 ms at each turn start of a long session, against
 * a few µs for a copy made with room (BENCHMARKS.md, "Turn start of a long session").
 */
function withRoom<T>(items: readonly T[]): T[] {
  const copy = items.concat(ROOM as readonly T[]);
  // capacity stays: V8 shrinks an array's store only when more than half of it is cut
  copy.length = items.length;
  return copy;
}

/** What the model reads in place of the turns a compaction replaced. */
function summaryText(data: ContextCompactedData): string {
  if (data.strategy === "truncate") return data.summary;
  return `The conversation before this point was summarised to fit the model's context window; the summary:\n\n${data.summary}`;
}
