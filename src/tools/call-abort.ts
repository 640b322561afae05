import { EventEmitter } from "node:events";

/** The calls following each turn's signal, with the reason each ends with when it fires. */
const following = new WeakMap<AbortSignal, Map<CallAbort, unknown>>();

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

  /**
   * Abort with `reason` when `signal` does, until `unfollow`. A turn's calls share one listener on
   * its signal: adding and removing a listener of Node's EventTarget for every call cost about 8 µs
   * a call in a busy Brain (BENCHMARKS.md).
   */
  follow(signal: AbortSignal, reason: unknown): void {
    if (signal.aborted) {
      this.abort(reason);
      return;
    }
    let calls = following.get(signal);
    if (!calls) {
      const followers = new Map<CallAbort, unknown>();
      signal.addEventListener(
        "abort",
        () => {
          for (const [call, why] of followers) call.abort(why);
        },
        { once: true },
      );
      following.set(signal, followers);
      calls = followers;
    }
    calls.set(this, reason);
  }

  unfollow(signal: AbortSignal): void {
    following.get(signal)?.delete(this);
  }
}
