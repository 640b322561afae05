import type { SessionEvent } from "./events.js";

export type EventListener = (event: SessionEvent, frame: string) => void;

/** An event as one SSE frame; stored events carry their seq as the id, live-only events none. */
export function sseFrame(event: SessionEvent): string {
  const id = "seq" in event ? `id: ${event.seq}\n` : "";
  return `${id}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Live delivery of a session's events to the clients watching it. Each event is serialized once
 * however many clients listen, which is what keeps fan-out to a thousand clients cheap.
 */
export class EventHub {
  readonly #listeners = new Map<string, Set<EventListener>>();

  subscribe(sessionId: string, listener: EventListener): () => void {
    let set = this.#listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.#listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(sessionId) === set) this.#listeners.delete(sessionId);
    };
  }

  publish(sessionId: string, event: SessionEvent): void {
    const set = this.#listeners.get(sessionId);
    if (!set || set.size === 0) return;
    const frame = sseFrame(event);
    for (const listener of set) listener(event, frame);
  }

  listenerCount(sessionId?: string): number {
    if (sessionId !== undefined) return this.#listeners.get(sessionId)?.size ?? 0;
    let total = 0;
    for (const set of this.#listeners.values()) total += set.size;
    return total;
  }
}
