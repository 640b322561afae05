import type { LiveEvent, NewEvent, NewLiveEvent, StoredEvent } from "../../protocol/events.js";
import { isoNow } from "../iso-now.js";
import type { SessionRecord } from "../sessions/session-record.js";
import type { AppendOptions, AppendResult, NewSession, Store } from "../store/store.js";
import type { Metrics } from "../telemetry/metrics.js";
import type { EventBus } from "./bus.js";

/**
 * Where every event of every session is written and published: an event is committed by the store
 * before the bus hands it to any client, and nothing else publishes.
 */
export class EventLog {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly metrics?: Pick<Metrics, "storeAppendSeconds">,
  ) {}

  async createSession(
    session: NewSession,
    first: NewEvent,
  ): Promise<{ session: SessionRecord; event: StoredEvent }> {
    const created = await this.store.createSession(session, first);
    this.bus.publishStored(session.id, [created.event]);
    return created;
  }

  async append(
    sessionId: string,
    events: readonly NewEvent[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    // no client anywhere may get this append's events before a live event published ahead of them
    const liveSent = this.bus.liveSent();
    if (liveSent) await liveSent;
    const started = performance.now();
    const result = await this.store.append(sessionId, events, options);
    this.metrics?.storeAppendSeconds.observe((performance.now() - started) / 1000);
    if (result.ok) this.bus.publishStored(sessionId, result.events);
    return result;
  }

  /** A live-only event, in its place after the stored event `afterSeq`. */
  publishLive(sessionId: string, afterSeq: number, event: NewLiveEvent): void {
    // a literal of one shape, not a spread: its map is its boilerplate's, the same every turn, where
    // a spread's could be dropped between turns and every reader of live events deoptimized
    // (BENCHMARKS.md, "Arrays of one kind")
    this.bus.publishLive(sessionId, afterSeq, {
      type: event.type,
      data: event.data,
      at: isoNow(),
    } as LiveEvent);
  }
}
