import type { Dispatcher } from "undici";
import { SseParser } from "../src/tools/sse-parser.js";
import { nowMs } from "./stats.js";

export interface ArrivedEvent {
  type: string;
  /** The event's seq (its SSE id); undefined for live-only events. */
  seq: number | undefined;
  /** When the frame was parsed here, in nowMs() time. */
  at: number;
  /** The frame's data, unparsed. */
  data: string;
}

/**
 * Watch a session's events over SSE as a client would, timing each frame's arrival. Only the frame's
 * `event` and `id` lines are read, never its JSON, so a thousand watchers cost the load generator
 * little. Resolves once the stream is open: Brain subscribes before it answers, so nothing published
 * after that is missed. `closed` settles when the stream ends.
 */
export async function watchEvents(
  dispatcher: Dispatcher,
  brain: { url: string; key: string },
  sessionId: string,
  onEvent: (event: ArrivedEvent) => void,
  signal: AbortSignal,
): Promise<{ closed: Promise<void> }> {
  const origin = new URL(brain.url);
  const response = await dispatcher.request({
    origin: origin.origin,
    path: `/sessions/${sessionId}/events`,
    method: "GET",
    headers: { authorization: `Bearer ${brain.key}`, accept: "text/event-stream" },
    signal,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    throw new Error(`GET events answered ${response.statusCode}: ${text.slice(0, 200)}`);
  }
  const parser = new SseParser(() => 64 * 1024 * 1024);
  const closed = (async () => {
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        const at = nowMs();
        for (const event of parser.push(chunk)) {
          const seq = event.id === undefined ? undefined : Number(event.id);
          onEvent({ type: event.event, seq, at, data: event.data });
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  })();
  return { closed };
}
