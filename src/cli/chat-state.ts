import { endsTurn, type SessionEvent } from "../../protocol/events.js";

/**
 * What a chat knows from the session's events, its history first and then its live stream:
 * whether a turn runs, and which calls wait for a person's answer. Both come from the events
 * alone, so a chat resumed while a call waits for approval can answer it.
 */
export class ChatState {
  running = false;
  readonly waiting = new Set<string>();

  /** Take in the next event; true when it ended a turn. */
  follow(event: SessionEvent): boolean {
    if (event.type === "tool.approval_requested") this.waiting.add(event.data.call_id);
    if (event.type === "tool.approval" || event.type === "tool.result")
      this.waiting.delete(event.data.call_id);
    if (event.type === "turn.started") this.running = true;
    if (!endsTurn(event.type)) return false;
    this.running = false;
    return true;
  }
}
