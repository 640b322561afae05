import type { Dispatcher } from "undici";
import { SseParser } from "../protocol/sse.js";
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
 * Watch an event stream as a client would, timing each frame's arrival. Only the frame's `event` and
 * `id` lines are looked at, never its JSON, so a thousand watchers cost the load generator little.
 * Resolves once the stream is open; `closed` settles when it ends.
 */
export async function watchStream(
  dispatcher: Dispatcher,
  url: string,
  path: string,
  headers: Record<string, string>,
  onEvent: (event: ArrivedEvent) => void,
  signal: AbortSignal,
): Promise<{ closed: Promise<void> }> {
  const response = await dispatcher.request({
    origin: new URL(url).origin,
    path,
    method: "GET",
    headers: { ...headers, accept: "text/event-stream" },
    signal,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    throw new Error(`GET ${path} answered ${response.statusCode}: ${text.slice(0, 200)}`);
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

/**
 * A session's events, as its SSE client sees them. Brain subscribes the stream before it answers,
 * so nothing published after this resolves is missed.
 */
export const watchEvents = (
  dispatcher: Dispatcher,
  brain: { url: string; key: string },
  sessionId: string,
  onEvent: (event: ArrivedEvent) => void,
  signal: AbortSignal,
) =>
  watchStream(
    dispatcher,
    brain.url,
    `/sessions/${sessionId}/events`,
    { authorization: `Bearer ${brain.key}` },
    onEvent,
    signal,
  );
