import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SessionEvent } from "../../protocol/events.js";
import type { EventBus, Subscription } from "../events/bus.js";
import { sseFrame } from "../events/bus.js";
import type { Store } from "../store/store.js";
import { EventStreamBody } from "./event-stream-body.js";
import { HeldFrames, writeFrames } from "./held-writes.js";

export interface EventStreamOptions {
  req: IncomingMessage;
  res: ServerResponse;
  sessionId: string;
  afterSeq: number;
  store: Store;
  bus: EventBus;
  keepAliveMs: number;
  /**
   * A client this far behind live events is dropped; it resumes with Last-Event-ID and loses
   * nothing. The history is sent as fast as the client reads it, whatever its size (but see
   * `historyStallMs`).
   */
  maxBufferedBytes: number;
  /**
   * A client that reads none of the history for this long is dropped: the history waits for the
   * client, and one that never reads would hold its page and its buffers for good.
   */
  historyStallMs: number;
  /** Ends the stream when it fires (an inspection token that stopped working). */
  endSignal?: AbortSignal;
  onOpen?: () => void;
  onClose?: () => void;
  /** The bytes of event frames of each write to the client (live ones go a pass of the loop at a time). */
  onWritten?: (bytes: number) => void;
}

// events read from the store at a time, which a client that stops reading holds at most
const PAGE = 500;
const PAGE_BYTES = 1024 * 1024;
/** How long a client that lost the stream waits before it reconnects (the `retry:` field). */
export const SSE_RETRY_MS = 1000;

/**
 * The SSE view of a session: stored history after `afterSeq`, then live events, until the client
 * leaves or the session closes. Live events that arrive while the history is being written are
 * held and sent after it, skipping any the history already had, so nothing is doubled or missed.
 */
export async function streamEvents(options: EventStreamOptions): Promise<void> {
  const { res, sessionId } = options;
  const body = new EventStreamBody(res, options.req);
  body.open({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  // clients reconnect at Brain's pace, not their own default (3 s in browsers)
  body.write(`retry: ${SSE_RETRY_MS}\n\n`);
  options.onOpen?.();

  // `ended`, not the signal's `aborted`, is what each event checks: every AbortSignal Node 20 makes
  // has a map of its own, so reading one's `aborted` is a megamorphic load and a getter call, about
  // 400 instructions, where a local costs nothing (BENCHMARKS.md); the signal is for `once` below
  const closed = new AbortController();
  let ended = false;
  let lastSeq = options.afterSeq;
  let replaying = true;
  // live events that arrive while the history is being written, and their size
  const held: { event: SessionEvent; frame: string }[] = [];
  let heldBytes = 0;

  // live events, written at the loop's next check phase
  const live = new HeldFrames(body, options.onWritten);

  let subscription: Subscription | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    closed.abort();
    subscription?.unsubscribe();
    clearInterval(keepAlive);
    options.endSignal?.removeEventListener("abort", end);
    options.onClose?.();
    live.flush();
    body.end();
  };
  // a client too far behind: it resumes with Last-Event-ID and loses nothing
  const drop = () => {
    res.destroy();
    end();
  };

  /**
   * Write an event unless the client has it already, at once or with the pass's other live ones;
   * false when it was the last one.
   */
  const write = (event: SessionEvent, frame: string, withThePass = false): boolean => {
    if ("seq" in event) {
      if (event.seq <= lastSeq) return true;
      lastSeq = event.seq;
    }
    if (withThePass) live.add(frame);
    else writeFrames(body, frame, options.onWritten);
    if (event.type !== "session.closed") return true;
    end();
    return false;
  };

  const listener = (event: SessionEvent, frame: string) => {
    if (ended) return;
    if (replaying) {
      held.push({ event, frame });
      heldBytes += frame.length;
      if (heldBytes > options.maxBufferedBytes) drop();
      return;
    }
    // live events cannot wait for a slow client: they queue in its buffer, up to the limit
    if (write(event, frame, true) && res.writableLength + live.length > options.maxBufferedBytes) drop();
  };
  const keepAlive = setInterval(() => body.write(": keep-alive\n\n"), options.keepAliveMs);
  keepAlive.unref();
  res.on("close", end);
  options.endSignal?.addEventListener("abort", end, { once: true });
  // a client that left while the route read the store closed its response before `close` was
  // listened to: nothing would ever end the stream, and it would hold its place for good
  if (res.destroyed || options.endSignal?.aborted) return end();

  // the history is paced by the client: a write that fills the buffer waits until it drains
  const paced = async (event: SessionEvent, frame: string): Promise<boolean> => {
    if (ended || !write(event, frame)) return false;
    if (res.writableNeedDrain) {
      const stalled = setTimeout(drop, options.historyStallMs);
      try {
        await once(res, "drain", { signal: closed.signal });
      } finally {
        clearTimeout(stalled);
      }
    }
    return !ended;
  };
  try {
    subscription = await options.bus.subscribe(sessionId, listener);
    // the client left while the subscription was made
    if (ended) return subscription.unsubscribe();
    // read before the history: if the session was closed then, the history holds its last event
    const closedBefore = (await options.store.getSession(sessionId))?.status === "closed";
    for (;;) {
      const page = await options.store.readEvents(sessionId, lastSeq, PAGE, PAGE_BYTES);
      for (const event of page) if (!(await paced(event, sseFrame(event)))) return;
      if (page.length === 0) break;
    }
    // still "replaying" while the held events go out, so a newer live event cannot pass them
    for (let next = held.shift(); next; next = held.shift()) {
      heldBytes -= next.frame.length;
      if (!(await paced(next.event, next.frame))) return;
    }
    replaying = false;
    // a client resuming at or after session.closed has had everything there will ever be
    if (closedBefore) end();
  } catch (error) {
    if (!ended) throw error;
  }
}
