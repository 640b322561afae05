import type { StoredEvent } from "../../protocol/events.js";

export type QueuedMessage = Extract<StoredEvent, { type: "message.queued" }>;

/**
 * A session's queue after `events`: each `message.queued` waits, oldest first, until a
 * `message.user` names it (`queued_seq`) as its turn starts. Pure.
 */
export function foldQueue(queue: readonly QueuedMessage[], events: readonly StoredEvent[]): QueuedMessage[] {
  const waiting = new Map(queue.map((message) => [message.seq, message]));
  for (const event of events) {
    if (event.type === "message.queued") waiting.set(event.seq, event);
    else if (event.type === "message.user" && event.data.queued_seq !== undefined)
      waiting.delete(event.data.queued_seq);
  }
  return [...waiting.values()];
}
