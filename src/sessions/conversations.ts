import type { ConversationMessage } from "../models/provider.js";
import type { Store } from "../store/store.js";
import { ConversationFold } from "./conversation.js";

/** Sessions whose folded conversation is kept between turns: about a kilobyte each when short. */
const KEPT = 1000;
const PAGE = 1000;

/**
 * The conversations of the sessions that ran turns lately, each folded once and caught up from the
 * store at its next turn start, so a turn start reads what was stored since the last one instead of
 * the session's whole log (which made a long session's every message cost more than the last).
 * Catching up from the store keeps it right whoever appended; the least recently used go first.
 */
export class Conversations {
  readonly #folds = new Map<string, ConversationFold>();

  constructor(
    private readonly store: Store,
    private readonly kept = KEPT,
  ) {}

  async of(sessionId: string): Promise<ConversationMessage[]> {
    const fold = this.#folds.get(sessionId) ?? new ConversationFold();
    // taken out while it catches up, so two turn starts never fold into one fold at once
    this.#folds.delete(sessionId);
    for (;;) {
      const page = await this.store.readEvents(sessionId, fold.lastSeq, PAGE);
      for (const event of page) fold.push(event);
      if (page.length < PAGE) break;
    }
    this.#folds.set(sessionId, fold);
    if (this.#folds.size > this.kept) this.#folds.delete(this.#folds.keys().next().value as string);
    return fold.messages();
  }
}
