import type { StoredEvent } from "../../protocol/events.js";
import type { EventBus, EventListener, Subscription } from "./bus.js";
import { sseFrame } from "./bus.js";
import { SessionOrder } from "./session-order.js";

/** Events read from the store at a time; a longer gap is read on at the next wait. */
const READ_AT_ONCE = 1000;

/** What the bus reads from the store: where a session's log ends, and events it missed. */
export interface EventSource {
  lastSeq(sessionId: string): Promise<number>;
  readEvents(sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
}

export interface LocalEventBusOptions {
  /**
   * How long events may wait for a missing earlier one before the bus reads it from the store:
   * an append that committed but whose caller never published it (its answer was lost) must not
   * stall the session's clients for good.
   */
  gapWaitMs: number;
}

interface Watched {
  order: SessionOrder;
  listeners: Set<EventListener>;
  /** Settles when the session's start (its last seq when the first client came) is known. */
  ready: Promise<void>;
  gapTimer: NodeJS.Timeout | undefined;
}

/**
 * The event bus of one Brain process: every append of the process publishes here, and each
 * session's events are put in order for the clients watching it. Sessions nobody watches cost
 * nothing: their events are dropped at once.
 */
export class LocalEventBus implements EventBus {
  readonly #watched = new Map<string, Watched>();

  constructor(
    private readonly source: EventSource,
    private readonly options: LocalEventBusOptions = { gapWaitMs: 1000 },
  ) {}

  publishStored(sessionId: string, events: readonly StoredEvent[]): void {
    const watched = this.#watched.get(sessionId);
    if (watched) this.#deliver(sessionId, watched, watched.order.pushStored(events));
  }

  publishLive(sessionId: string, afterSeq: number, event: Parameters<EventBus["publishLive"]>[2]): void {
    const watched = this.#watched.get(sessionId);
    if (watched) this.#deliver(sessionId, watched, watched.order.pushLive(afterSeq, event));
  }

  /** Live events are delivered as they are published. */
  liveSent(): undefined {
    return undefined;
  }

  async subscribe(sessionId: string, listener: EventListener): Promise<Subscription> {
    const watched = this.#watched.get(sessionId) ?? this.#watch(sessionId);
    // listening from now on: what commits while the start is read is held until it is known
    watched.listeners.add(listener);
    const subscription = { unsubscribe: () => this.#unsubscribe(sessionId, listener) };
    try {
      await watched.ready;
    } catch (error) {
      subscription.unsubscribe();
      throw error;
    }
    return subscription;
  }

  /**
   * The session's log reaches `lastSeq` (an append elsewhere said so): deliver what this bus has
   * not had yet, read from the store. Nothing to do for a session nobody here watches.
   */
  async appendedUpTo(sessionId: string, lastSeq: number): Promise<void> {
    const watched = this.#watched.get(sessionId);
    if (!watched) return;
    // known from here on: if the read below fails, or the start is still being read, the gap
    // timer reads what is missing
    watched.order.reaches(lastSeq);
    const delivered = watched.order.delivered;
    if (delivered === undefined || lastSeq <= delivered) return;
    try {
      const events = await this.source.readEvents(
        sessionId,
        delivered,
        Math.min(lastSeq - delivered, READ_AT_ONCE),
      );
      if (this.#watched.get(sessionId) === watched)
        this.#deliver(sessionId, watched, watched.order.pushStored(events));
    } catch (error) {
      if (this.#watched.get(sessionId) === watched) this.#deliver(sessionId, watched, []);
      throw error;
    }
  }

  /** The sessions someone here watches. */
  watchedSessions(): string[] {
    return [...this.#watched.keys()];
  }

  listenerCount(sessionId?: string): number {
    if (sessionId !== undefined) return this.#watched.get(sessionId)?.listeners.size ?? 0;
    let total = 0;
    for (const watched of this.#watched.values()) total += watched.listeners.size;
    return total;
  }

  async close(): Promise<void> {
    for (const watched of this.#watched.values()) clearTimeout(watched.gapTimer);
    this.#watched.clear();
  }

  #deliver(sessionId: string, watched: Watched, events: ReturnType<SessionOrder["pushStored"]>): void {
    for (const event of events) {
      const frame = sseFrame(event);
      for (const listener of watched.listeners) listener(event, frame);
    }
    const gap = watched.order.gap();
    if (gap && !watched.gapTimer) {
      watched.gapTimer = setTimeout(() => this.#fillGap(sessionId, watched), this.options.gapWaitMs);
      watched.gapTimer.unref();
    } else if (!gap && watched.gapTimer) {
      clearTimeout(watched.gapTimer);
      watched.gapTimer = undefined;
    }
  }

  #watch(sessionId: string): Watched {
    const watched: Watched = {
      order: new SessionOrder(),
      listeners: new Set(),
      ready: Promise.resolve(),
      gapTimer: undefined,
    };
    watched.ready = this.source.lastSeq(sessionId).then(
      (start) => this.#deliver(sessionId, watched, watched.order.start(start)),
      (error) => {
        // the next subscriber reads the start again
        if (this.#watched.get(sessionId) === watched) this.#watched.delete(sessionId);
        throw error;
      },
    );
    this.#watched.set(sessionId, watched);
    return watched;
  }

  async #fillGap(sessionId: string, watched: Watched): Promise<void> {
    watched.gapTimer = undefined;
    const gap = watched.order.gap();
    if (!gap || this.#watched.get(sessionId) !== watched) return;
    let missing: StoredEvent[] = [];
    try {
      missing = await this.source.readEvents(
        sessionId,
        gap.after,
        Math.min(gap.before - gap.after - 1, READ_AT_ONCE),
      );
    } catch {
      // the store is away: the next wait tries again
    }
    if (this.#watched.get(sessionId) === watched)
      this.#deliver(sessionId, watched, watched.order.pushStored(missing));
  }

  #unsubscribe(sessionId: string, listener: EventListener): void {
    const watched = this.#watched.get(sessionId);
    if (!watched) return;
    watched.listeners.delete(listener);
    if (watched.listeners.size > 0) return;
    clearTimeout(watched.gapTimer);
    this.#watched.delete(sessionId);
  }
}
