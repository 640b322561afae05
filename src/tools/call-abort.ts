import { EventEmitter } from "node:events";

/**
 * How a tool call is ended early (its time limits, its session's interruption): the `signal` its
 * request goes to undici with, which takes an EventEmitter as well as an AbortSignal. Every call
 * makes one, and an AbortController with the call's two listeners costs about 4.4 µs where this
 * costs 0.2 µs (in-process, BENCHMARKS.md).
 */
export class CallAbort extends EventEmitter {
  aborted = false;
  /** Why the call was ended: compared by identity with the dispatcher's own reasons. */
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}
