import type { ContextCompactedData, ToolResultEventData } from "../../protocol/events.js";
import type { ConversationMessage, Usage } from "../models/provider.js";
import { packedMap } from "../packed.js";
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
  /** For a summary: the user turns it stands for, those of the summaries it replaced included. */
  turns?: number;
}

/** The user turns that entries stand for, those an earlier summary replaced included. Pure. */
export function turnsIn(entries: readonly HistoryEntry[]): number {
  let turns = 0;
  for (const entry of entries) {
    if (entry.message.role === "user") turns++;
    else if (entry.message.role === "summary") turns += entry.turns ?? 0;
  }
  return turns;
}

const UNSTORED = Number.MAX_SAFE_INTEGER;

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
  /** The copy adding to this history's arrays past `length`, their length when it was made. */
  #lent: { copy: ContextHistory; length: number } | undefined;
  /** The history a copy adds to the arrays of. */
  #base: ContextHistory | undefined;
  /** Set on a copy once the history it borrowed from took its arrays back. */
  #revoked = false;

  constructor(readonly measure: ContextMeasure) {}

  /**
   * A copy to add a turn's messages to, leaving this one as the log has it. The copy adds to this
   * history's own arrays rather than to copies of them, which would cost a turn start time in
   * proportion to the session (BENCHMARKS.md, "Turn start of a long session"); so it is lent
   * until its turn ends (`release`) or this history is next read, changed or copied, which cuts the
   * arrays back to this one's messages. A copy used after that throws: one turn at a time reads a
   * session's conversation.
   */
  copy(): ContextHistory {
    this.#reclaim();
    const copy = new ContextHistory(this.measure);
    copy.#base = this;
    copy.#entries = this.#entries;
    copy.#messages = this.#messages;
    copy.#steps = this.#steps;
    copy.#tokens = this.#tokens;
    copy.#reported = this.#reported;
    this.#lent = { copy, length: this.#entries.length };
    return copy;
  }

  /**
   * The turn this copy was made for is over: the history it was made from has its arrays back now,
   * rather than holding this turn's messages until that session's next turn start.
   */
  release(): void {
    const base = this.#base;
    if (base && base.#lent?.copy === this) base.#reclaim();
    else this.#revoke();
  }

  push(message: ConversationMessage, seq = UNSTORED): void {
    this.#reclaim();
    const sent =
      message.role === "tool"
        ? { role: "tool" as const, results: packedMap(message.results, this.measure.forModel) }
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
    this.#reclaim();
    this.#answered = usage;
  }

  /** The provider's usage of the call that wrote the last message: its count of everything through it. */
  report(usage: Usage): void {
    this.#reclaim();
    const tokens = usage.input_tokens + usage.output_tokens;
    if (tokens > 0) this.#reported = { tokens, estimated: this.#tokens };
  }

  /** The conversation's tokens with `overhead` (system prompt and tools), and with `extra` messages after it. */
  tokens(overhead: number, extra: readonly ConversationMessage[] = []): number {
    this.#reclaim();
    let more = 0;
    for (const message of extra) more += messageTokens(this.measure.counter, message);
    const reported = this.#reported;
    if (!reported) return overhead + this.#tokens + more;
    return reported.tokens + (this.#tokens - reported.estimated) + more;
  }

  entries(): readonly HistoryEntry[] {
    this.#reclaim();
    return this.#entries;
  }

  /** The conversation as the model is sent it; it changes as the history does, so read it, keep a copy. */
  messages(): readonly ConversationMessage[] {
    this.#reclaim();
    return this.#messages;
  }

  /** Every model step the conversation holds, those a summary replaced included. */
  steps(): number {
    this.#reclaim();
    return this.#steps;
  }

  /** Replace every message up to the compaction's `through_seq` by its summary. */
  compact(data: ContextCompactedData): void {
    this.#reclaim();
    const cut = this.#entries.findIndex((entry) => entry.seq > data.through_seq);
    const end = cut === -1 ? this.#entries.length : cut;
    const replaced = this.#entries.slice(0, end);
    let steps = 0;
    let dropped = 0;
    for (const { message, tokens } of replaced) {
      if (message.role === "assistant") steps++;
      else if (message.role === "summary") steps += message.steps;
      dropped += tokens;
    }
    const summary: ConversationMessage = { role: "summary", text: summaryText(data), steps };
    const tokens = messageTokens(this.measure.counter, summary);
    const turns = turnsIn(replaced);
    this.#entries = [{ message: summary, seq: data.through_seq, tokens, turns }, ...this.#entries.slice(end)];
    this.#messages = this.#entries.map((entry) => entry.message);
    this.#tokens += tokens - dropped;
    // the provider's count covered what is gone: from here on the estimate stands alone
    this.#reported = undefined;
  }

  /**
   * Before this history is used: fail if it is a copy whose arrays were taken back, and take back
   * its own from the copy it lent them to, if any.
   */
  #reclaim(): void {
    if (this.#revoked) {
      throw new Error(
        "a turn's copy of the conversation was used after its turn ended or the session's next turn began",
      );
    }
    const lent = this.#lent;
    if (!lent) return;
    this.#lent = undefined;
    lent.copy.#revoke();
    // a copy that compacted made arrays of its own: then these hold only this history's
    this.#entries.length = lent.length;
    this.#messages.length = lent.length;
  }

  /** No more use of this copy, nor of any copy made of it: they share its arrays. */
  #revoke(): void {
    this.#revoked = true;
    const lent = this.#lent;
    this.#lent = undefined;
    if (lent) lent.copy.#revoke();
  }
}

/** What the model reads in place of the turns a compaction replaced. */
function summaryText(data: ContextCompactedData): string {
  if (data.strategy === "truncate") return data.summary;
  return `The conversation before this point was summarised to fit the model's context window; the summary:\n\n${data.summary}`;
}
