import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EventHub } from "../sessions/event-hub.js";
import { sseFrame } from "../sessions/event-hub.js";
import type { SessionEvent } from "../sessions/events.js";
import type { Store } from "../store/store.js";

export interface EventStreamOptions {
  req: IncomingMessage;
  res: ServerResponse;
  sessionId: string;
  afterSeq: number;
  store: Store;
  hub: EventHub;
  keepAliveMs: number;
  /** A client this far behind is dropped; it resumes with Last-Event-ID and loses nothing. */
  maxBufferedBytes: number;
  /** Ends the stream when it fires (an inspection token that stopped working). */
  endSignal?: AbortSignal;
  onOpen?: () => void;
  onClose?: () => void;
}

const PAGE = 500;

/**
 * The SSE view of a session: stored history after `afterSeq`, then live events, until the client
 * leaves or the session closes. Live events that arrive while the history is being written are
 * held and sent after it, skipping any the history already had, so nothing is doubled or missed.
 */
export async function streamEvents(options: EventStreamOptions): Promise<void> {
  const { res, sessionId } = options;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  options.onOpen?.();

  const closed = new AbortController();
  let lastSeq = options.afterSeq;
  let replaying = true;
  const held: { event: SessionEvent; frame: string }[] = [];

  const end = () => {
    if (closed.signal.aborted) return;
    closed.abort();
    unsubscribe();
    clearInterval(keepAlive);
    options.endSignal?.removeEventListener("abort", end);
    options.onClose?.();
    if (!res.writableEnded) res.end();
  };

  const deliver = (event: SessionEvent, frame: string) => {
    if ("seq" in event) {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
    }
    res.write(frame);
    if (res.writableLength > options.maxBufferedBytes) {
      res.destroy();
      return end();
    }
    if (event.type === "session.closed") end();
  };

  const unsubscribe = options.hub.subscribe(sessionId, (event, frame) => {
    if (closed.signal.aborted) return;
    if (replaying) held.push({ event, frame });
    else deliver(event, frame);
  });
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), options.keepAliveMs);
  keepAlive.unref();
  res.on("close", end);
  options.endSignal?.addEventListener("abort", end, { once: true });
  if (options.endSignal?.aborted) return end();

  try {
    for (;;) {
      const page = await options.store.readEvents(sessionId, lastSeq, PAGE);
      for (const event of page) {
        if (closed.signal.aborted) return;
        deliver(event, sseFrame(event));
      }
      if (closed.signal.aborted) return;
      if (res.writableNeedDrain) await once(res, "drain", { signal: closed.signal });
      if (page.length < PAGE) break;
    }
  } catch (error) {
    if (!closed.signal.aborted) throw error;
    return;
  }
  replaying = false;
  for (const { event, frame } of held.splice(0)) {
    if (closed.signal.aborted) return;
    deliver(event, frame);
  }
}
