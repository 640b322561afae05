import type pg from "pg";
import type { LiveEvent, StoredEvent } from "../../../protocol/events.js";
import type { EventBus, EventListener, Subscription } from "../../events/bus.js";
import { LocalEventBus } from "../../events/local-bus.js";
import type { Logger } from "../../telemetry/logger.js";
import type { Store } from "../store.js";
import type { PostgresNotifications } from "./notifications.js";

/** NOTIFY payloads stop at 8,000 bytes; a live event larger than this goes through a table. */
const MAX_PAYLOAD = 7_800;
/** Live events kept in the table for instances to read, then removed. */
const LIVE_ROWS_KEPT_MS = 60_000;

/** An append waiting until the live events published before it have left. */
interface LiveWaiter {
  upTo: number;
  wake: () => void;
}

type LiveEntry = [sessionId: string, afterSeq: number, event: LiveEvent];

/** What one instance tells the others of live events: inline, or where to read one too large. */
interface LivePayload {
  i: string;
  l?: LiveEntry[];
  r?: number;
}

/**
 * The event bus of a Brain instance among many. Appends anywhere tell every instance (NOTIFY
 * brain_events, sent by the append's own transaction) how far a session's log reaches; an instance
 * with clients of that session reads what it lacks from the store. Live-only events cross as
 * notifications of their own (brain_live), each with the seq it follows, so that every instance
 * puts them in the same place. Ordering and delivery are the in-process bus's.
 */
export class PostgresEventBus implements EventBus {
  readonly #local: LocalEventBus;
  /**
   * Notifications are handled one after another, in the order they came: a live event read from
   * the table must reach the clients before the stored events appended after it.
   */
  #incoming: Promise<void> = Promise.resolve();
  #outgoing: LiveEntry[] = [];
  #flushing = false;
  /** Live events published, and of those sent (or given up on), counted from the start. */
  #published = 0;
  #sent = 0;
  #waiting: LiveWaiter[] = [];
  #prune: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly pool: pg.Pool,
    notifications: PostgresNotifications,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {
    this.#local = new LocalEventBus(store);
    notifications.on("brain_events", (payload) => this.#inOrder(() => this.#appended(payload)));
    notifications.on("brain_live", (payload) => this.#inOrder(() => this.#live(payload)));
    notifications.onReconnect(() => this.#catchUp());
    this.#prune = setInterval(() => this.#pruneLiveRows(), LIVE_ROWS_KEPT_MS);
    this.#prune.unref();
  }

  publishStored(sessionId: string, events: readonly StoredEvent[]): void {
    this.#local.publishStored(sessionId, events);
  }

  publishLive(sessionId: string, afterSeq: number, event: LiveEvent): void {
    this.#local.publishLive(sessionId, afterSeq, event);
    this.#outgoing.push([sessionId, afterSeq, event]);
    this.#published += 1;
    // the live events of one tick cross together
    if (this.#outgoing.length === 1 && !this.#flushing) setImmediate(() => this.#flush());
  }

  liveSent(): Promise<void> | undefined {
    if (this.#sent === this.#published) return undefined;
    const upTo = this.#published;
    return new Promise((wake) => this.#waiting.push({ upTo, wake }));
  }

  subscribe(sessionId: string, listener: EventListener): Promise<Subscription> {
    return this.#local.subscribe(sessionId, listener);
  }

  listenerCount(sessionId?: string): number {
    return this.#local.listenerCount(sessionId);
  }

  async close(): Promise<void> {
    clearInterval(this.#prune);
    await this.#local.close();
  }

  #inOrder(handle: () => Promise<void>): void {
    this.#incoming = this.#incoming.then(handle);
  }

  async #appended(payload: string): Promise<void> {
    const [sessionId, seq] = payload.split(" ");
    const lastSeq = Number(seq);
    if (!sessionId || !Number.isSafeInteger(lastSeq)) return;
    try {
      await this.#local.appendedUpTo(sessionId, lastSeq);
    } catch (error) {
      this.logger.warn({ session_id: sessionId, err: error }, "could not read events appended elsewhere");
    }
  }

  async #live(payload: string): Promise<void> {
    let parsed: LivePayload;
    try {
      parsed = JSON.parse(payload) as LivePayload;
    } catch {
      return;
    }
    if (parsed.i === this.instanceId) return;
    if (Array.isArray(parsed.l)) this.#deliverLive(parsed.l);
    else if (typeof parsed.r === "number") await this.#readLiveRow(parsed.r);
  }

  #deliverLive(entries: readonly LiveEntry[]): void {
    for (const entry of entries) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string" || typeof entry[1] !== "number") continue;
      // sessions nobody here watches cost one map lookup
      if (this.#local.listenerCount(entry[0]) > 0) this.#local.publishLive(entry[0], entry[1], entry[2]);
    }
  }

  async #readLiveRow(id: number): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ payload: string }>(
        "SELECT payload FROM brain_live_events WHERE id = $1",
        [id],
      );
      if (rows[0]) this.#deliverLive([JSON.parse(rows[0].payload) as LiveEntry]);
    } catch (error) {
      this.logger.warn({ err: error }, "could not read a live event sent by another instance");
    }
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#outgoing.length > 0) {
        const batch = this.#outgoing;
        this.#outgoing = [];
        try {
          await this.#send(batch);
        } catch (error) {
          // live events are never stored: a client elsewhere misses these, and reads the stored ones
          this.logger.warn({ err: error }, "could not send live events to the other instances");
        }
        this.#markSent(batch.length);
      }
    } finally {
      this.#flushing = false;
    }
  }

  #markSent(count: number): void {
    this.#sent += count;
    const still: LiveWaiter[] = [];
    for (const waiter of this.#waiting) {
      if (waiter.upTo <= this.#sent) waiter.wake();
      else still.push(waiter);
    }
    this.#waiting = still;
  }

  async #send(entries: readonly LiveEntry[]): Promise<void> {
    let inline: string[] = [];
    let size = 0;
    const sendInline = async () => {
      if (inline.length === 0) return;
      await this.#notify(`{"i":${JSON.stringify(this.instanceId)},"l":[${inline.join(",")}]}`);
      inline = [];
      size = 0;
    };
    for (const entry of entries) {
      const json = JSON.stringify(entry);
      const bytes = Buffer.byteLength(json);
      if (bytes > MAX_PAYLOAD) {
        // in order: what came before it crosses first
        await sendInline();
        const { rows } = await this.pool.query<{ id: number }>(
          "INSERT INTO brain_live_events (payload) VALUES ($1) RETURNING id",
          [json],
        );
        await this.#notify(JSON.stringify({ i: this.instanceId, r: rows[0]?.id }));
        continue;
      }
      if (size + bytes > MAX_PAYLOAD) await sendInline();
      inline.push(json);
      size += bytes + 1;
    }
    await sendInline();
  }

  async #notify(payload: string): Promise<void> {
    await this.pool.query("SELECT pg_notify('brain_live', $1)", [payload]);
  }

  async #pruneLiveRows(): Promise<void> {
    await this.pool
      .query("DELETE FROM brain_live_events WHERE created_at < now() - $1 * interval '1 millisecond'", [
        LIVE_ROWS_KEPT_MS,
      ])
      .catch(() => undefined);
  }

  /** Notifications sent while the connection was away are lost: read how far each watched log got. */
  async #catchUp(): Promise<void> {
    for (const sessionId of this.#local.watchedSessions()) {
      try {
        await this.#local.appendedUpTo(sessionId, await this.store.lastSeq(sessionId));
      } catch (error) {
        this.logger.warn({ session_id: sessionId, err: error }, "could not catch up a session's events");
      }
    }
  }
}
