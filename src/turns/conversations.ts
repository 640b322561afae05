import type { StoredEvent } from "../../protocol/events.js";
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
 * The conversations of the sessions that ran turns lately, each folded once and kept up to date:
 * with what a turn stored, when it ends, and with its next start's events, when nobody else
 * appended in between; else caught up from the store at the next turn start. So a turn start reads
 * at most what others stored since the last one, never the session's whole log (which made a long
 * session's every message cost more than the last), and it is right whoever appended. The least
 * recently used go first.
 */
export class Conversations {
  readonly #folds = new Map<string, ConversationFold>();
  /** The sum of the kept folds' sizes. */
  #bytes = 0;

  constructor(
    private readonly store: Store,
    private readonly kept: ConversationsLimits = KEPT,
  ) {}

  /**
   * The session's conversation, as a copy to add a turn to, released when the turn ends. `started`
   * are the events the turn's start stored (its message and `turn.started`): when the kept fold
   * ends right before them, they are folded in as they are and nothing is read, since nothing a
   * conversation holds can be appended after them before the turn's first step.
   */
  async of(
    sessionId: string,
    measure: ContextMeasure,
    started: readonly StoredEvent[] = [],
  ): Promise<ContextHistory> {
    const kept = this.#take(sessionId);
    // folded for another tokenizer (the session's model entry changed): fold again
    const fold =
      kept && kept.measure.counter.family === measure.counter.family ? kept : new ConversationFold(measure);
    if (!foldFollowing(fold, started)) {
      for (;;) {
        const page = await this.store.readEvents(sessionId, fold.lastSeq, PAGE);
        for (const event of page) fold.push(event);
        if (page.length < PAGE) break;
      }
    }
    this.#keep(sessionId, fold);
    return fold.history();
  }

  /**
   * A turn of the session ended, having stored `own` (in the order stored): when they follow on
   * from the kept fold with nothing between, they are folded in, so the next turn start reads
   * none of them back. When anyone else appended meanwhile (an approval, an instance taking the
   * turn over), the fold is left where it was and the next turn start reads on from there.
   */
  advance(sessionId: string, own: readonly StoredEvent[]): void {
    const fold = this.#take(sessionId);
    if (!fold) return;
    foldFollowing(fold, own);
    this.#keep(sessionId, fold);
  }

  /** Drop the session's conversation, if it is kept. */
  forget(sessionId: string): void {
    this.#take(sessionId);
  }

  /** Keep a fold, the most recently used, within the bounds. */
  #keep(sessionId: string, fold: ConversationFold): void {
    // one conversation over the byte bound alone is not kept, rather than pushing out all others
    if (fold.size > this.kept.bytes) return;
    this.#folds.set(sessionId, fold);
    this.#bytes += fold.size;
    // the least recently used go first
    for (const [oldest] of this.#folds) {
      if (this.#folds.size <= this.kept.sessions && this.#bytes <= this.kept.bytes) break;
      this.#take(oldest);
    }
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

/**
 * Fold `events` in if they follow on from the fold's last event seq by seq, and say whether they
 * did; a fold they do not follow is left as it was.
 */
function foldFollowing(fold: ConversationFold, events: readonly StoredEvent[]): boolean {
  if (events.length === 0) return false;
  let seq = fold.lastSeq;
  for (const event of events) if (event.seq !== ++seq) return false;
  for (const event of events) fold.push(event);
  return true;
}
