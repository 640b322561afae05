import type { ContextHistory, ContextMeasure } from "../context/history.js";
import type { Store } from "../store/store.js";
import { ConversationFold } from "./conversation.js";

/** How many folded conversations are kept between turns, and how many bytes of them at most. */
export interface ConversationsLimits {
  sessions: number;
  bytes: number;
}

// about a kilobyte each when short; the byte bound keeps a few huge sessions from holding memory
const KEPT: ConversationsLimits = { sessions: 1000, bytes: 128 * 1024 * 1024 };
const PAGE = 1000;

/**
 * The conversations of the sessions that ran turns lately, each folded once and caught up from the
 * store at its next turn start, so a turn start reads what was stored since the last one instead of
 * the session's whole log (which made a long session's every message cost more than the last).
 * Catching up from the store keeps it right whoever appended; the least recently used go first.
 */
export class Conversations {
  readonly #folds = new Map<string, ConversationFold>();
  /** The sum of the kept folds' sizes. */
  #bytes = 0;

  constructor(
    private readonly store: Store,
    private readonly kept: ConversationsLimits = KEPT,
  ) {}

  /** The session's conversation, as a copy to add a turn to, released when the turn ends. */
  async of(sessionId: string, measure: ContextMeasure): Promise<ContextHistory> {
    const kept = this.#take(sessionId);
    // folded for another tokenizer (the session's model entry changed): fold again
    const fold =
      kept && kept.measure.counter.family === measure.counter.family ? kept : new ConversationFold(measure);
    for (;;) {
      const page = await this.store.readEvents(sessionId, fold.lastSeq, PAGE);
      for (const event of page) fold.push(event);
      if (page.length < PAGE) break;
    }
    // one conversation over the byte bound alone is not kept, rather than pushing out all others
    if (fold.size > this.kept.bytes) return fold.history();
    this.#folds.set(sessionId, fold);
    this.#bytes += fold.size;
    // the least recently used go first
    for (const [oldest] of this.#folds) {
      if (this.#folds.size <= this.kept.sessions && this.#bytes <= this.kept.bytes) break;
      this.#take(oldest);
    }
    return fold.history();
  }

  /** Taken out while it catches up, so two turn starts never fold into one fold at once. */
  #take(sessionId: string): ConversationFold | undefined {
    const fold = this.#folds.get(sessionId);
    if (!fold) return undefined;
    this.#folds.delete(sessionId);
    this.#bytes -= fold.size;
    return fold;
  }
}
