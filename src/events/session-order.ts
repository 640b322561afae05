import type { LiveEvent, SessionEvent, StoredEvent } from "../../protocol/events.js";

/** Seqs missing between what was delivered and what is held: `after` < seq < `before`. */
export interface Gap {
  after: number;
  before: number;
}

interface WaitingLive {
  afterSeq: number;
  event: LiveEvent;
}

/**
 * One session's events put in order: stored events are released in `seq` order with no gap and
 * each once, live-only events right after the stored event they follow. Pure: the bus feeds it
 * what arrives and delivers what it releases.
 */
export class SessionOrder {
  /** The seq of the last stored event released; undefined until the start is known. */
  #delivered: number | undefined;
  /** Stored events that arrived ahead of a missing one, by seq. */
  readonly #held = new Map<number, StoredEvent>();
  /** Live events whose stored predecessor has not been released, in arrival order. */
  #live: WaitingLive[] = [];
  /** The highest seq known to be committed, though perhaps not yet here. */
  #known = 0;

  get delivered(): number | undefined {
    return this.#delivered;
  }

  /** Start releasing after `seq` (the session's last committed seq when the first client came). */
  start(seq: number): SessionEvent[] {
    this.#delivered = seq;
    for (const held of this.#held.keys()) if (held <= seq) this.#held.delete(held);
    return this.#release();
  }

  pushStored(events: readonly StoredEvent[]): SessionEvent[] {
    // the usual case: the next events, with nothing waiting
    const first = events[0];
    if (
      first &&
      first.seq === (this.#delivered ?? -1) + 1 &&
      this.#held.size === 0 &&
      this.#live.length === 0
    ) {
      this.#delivered = (events.at(-1) as StoredEvent).seq;
      return events as StoredEvent[];
    }
    for (const event of events) {
      if (this.#delivered === undefined || event.seq > this.#delivered) this.#held.set(event.seq, event);
    }
    return this.#release();
  }

  pushLive(afterSeq: number, event: LiveEvent): SessionEvent[] {
    if (this.#delivered !== undefined && afterSeq <= this.#delivered) return [event];
    this.#live.push({ afterSeq, event });
    return [];
  }

  /** The log reaches `seq`: the events up to it are committed, whether or not they came here. */
  reaches(seq: number): void {
    if (seq > this.#known) this.#known = seq;
  }

  /**
   * The stored events missing before the first one held, or, with none held, those up to the
   * last one known to be committed or followed by a live event waiting here: nothing may come
   * after a lost one to show it is missing.
   */
  gap(): Gap | undefined {
    const delivered = this.#delivered;
    if (delivered === undefined) return undefined;
    if (this.#held.size > 0) return { after: delivered, before: Math.min(...this.#held.keys()) };
    let last = this.#known;
    for (const entry of this.#live) if (entry.afterSeq > last) last = entry.afterSeq;
    return last > delivered ? { after: delivered, before: last + 1 } : undefined;
  }

  /** How many events wait for an earlier one. */
  get waiting(): number {
    return this.#held.size + this.#live.length;
  }

  #release(): SessionEvent[] {
    if (this.#delivered === undefined) return [];
    const out: SessionEvent[] = [];
    for (;;) {
      // live events that follow what was released go first: they were published before the next one
      if (this.#live.length > 0) this.#releaseLive(this.#delivered, out);
      const next = this.#held.get(this.#delivered + 1);
      if (!next) return out;
      this.#held.delete(next.seq);
      this.#delivered = next.seq;
      out.push(next);
    }
  }

  #releaseLive(delivered: number, out: SessionEvent[]): void {
    const waiting: WaitingLive[] = [];
    for (const entry of this.#live) {
      if (entry.afterSeq <= delivered) out.push(entry.event);
      else waiting.push(entry);
    }
    this.#live = waiting;
  }
}
