import type { NewEvent, SessionEvent, StoredEvent } from "../../protocol/events.js";

/**
 * A stored event as the store that committed it returns it, holding the JSON its data was stored
 * as: the SSE frame is built around that string instead of serializing the data a second time,
 * which for a large tool result is most of its frame's cost. The JSON goes with the event object
 * (a folded conversation keeps the data, not the event); a copy of the event is a plain object and
 * is serialized whole, and so are events read back from the store. A class and not a WeakMap from
 * data to JSON: a weak map's entries are work for every young-generation collection.
 */
class AppendedEvent {
  readonly seq: number;
  readonly type: StoredEvent["type"];
  readonly data: StoredEvent["data"];
  readonly at: string;
  readonly #dataJson: string;

  constructor(seq: number, event: NewEvent, at: string, dataJson: string) {
    // the order JSON.stringify writes an event read back from the store in
    this.seq = seq;
    this.type = event.type;
    this.data = event.data;
    this.at = at;
    this.#dataJson = dataJson;
  }

  json(): string {
    // the type is one of Brain's event names and the time an ISO string its store wrote: neither
    // holds a character JSON escapes, so each is quoted as it is rather than sent through
    // JSON.stringify, whose every call costs more than these strings' length
    return `{"seq":${this.seq},"type":"${this.type}","data":${this.#dataJson},"at":"${this.at}"}`;
  }
}

/** The event `seq` a store committed at `at`, its data stored as `dataJson`. */
export const appendedEvent = (seq: number, event: NewEvent, at: string, dataJson: string): StoredEvent =>
  new AppendedEvent(seq, event, at, dataJson) as StoredEvent;

/** The event as JSON: an appended one around its data's stored JSON, any other whole. */
export const eventJson = (event: SessionEvent): string =>
  event instanceof AppendedEvent ? event.json() : JSON.stringify(event);
