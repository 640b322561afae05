import type { SessionEvent } from "../../protocol/events.js";

/**
 * The JSON each appended event's data was stored as, by the data object: the SSE frame is built
 * around that string instead of serializing the data a second time, which for a large tool result
 * is most of its frame's cost. An entry lives as long as its data object, which the turn that
 * appended it holds; events read back from the store are serialized as before.
 */
const storedAs = new WeakMap<object, string>();

/** `data` as the store writes it, remembered for the event's frame. */
export function storedJson(data: object): string {
  const json = JSON.stringify(data);
  storedAs.set(data, json);
  return json;
}

/** The event as JSON, a stored one around its data's stored JSON when this process wrote it. */
export function eventJson(event: SessionEvent): string {
  const data = "seq" in event && storedAs.get(event.data);
  if (!data) return JSON.stringify(event);
  // the order the stores build a stored event in, so the frame is the one JSON.stringify made
  return `{"seq":${event.seq},"type":${JSON.stringify(event.type)},"data":${data},"at":${JSON.stringify(event.at)}}`;
}

/**
 * Forget the JSON `data` was stored as: for data kept on (a folded conversation holds a turn's
 * results), whose frames are long written. A frame made later is serialized as if read back.
 */
export function forgetStoredJson(data: object): void {
  storedAs.delete(data);
}
