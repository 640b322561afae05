import type { LiveEvent, SessionEvent, StoredEvent } from "../../protocol/events.js";
import { eventJson } from "./event-json.js";

/** Gets each event of a session with its SSE frame, serialized once however many listen. */
export type EventListener = (event: SessionEvent, frame: string) => void;

export interface Subscription {
  /** Stop listening; the last subscriber of a session lets the bus forget it. */
  unsubscribe(): void;
}

/**
 * The one way events reach the clients watching a session. Each subscriber gets the session's
 * stored events in `seq` order with no gap, from the first one committed after it subscribed,
 * whatever order the appends that made them resolved in; and each live-only event in its place,
 * after the stored event its publisher had seen last.
 */
export interface EventBus {
  /** Events just committed by an append of this process. */
  publishStored(sessionId: string, events: readonly StoredEvent[]): void;
  /** A live-only event (never stored), to come after the stored event `afterSeq`. */
  publishLive(sessionId: string, afterSeq: number, event: LiveEvent): void;
  /**
   * Resolves once the live events published so far are on their way to every subscriber, or
   * undefined when they are already: an append waits for it, so that no client anywhere gets a
   * stored event before a live one that was published ahead of it.
   */
  liveSent(): Promise<void> | undefined;
  /** Resolves once the subscription is in place: every event committed later reaches `listener`. */
  subscribe(sessionId: string, listener: EventListener): Promise<Subscription>;
  /** Subscribers of one session, or of all. */
  listenerCount(sessionId?: string): number;
  close(): Promise<void>;
}

/** An event as one SSE frame; stored events carry their seq as the id, live-only events none. */
export function sseFrame(event: SessionEvent): string {
  const id = "seq" in event ? `id: ${event.seq}\n` : "";
  return `${id}event: ${event.type}\ndata: ${eventJson(event)}\n\n`;
}
