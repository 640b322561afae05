/** The calls following each turn's signal, with the reason each ends with when it fires. */
const following = new WeakMap<AbortSignal, Map<CallAbort, unknown>>();

/**
 * How a tool call is ended early: its time limits, its session's interruption. Every call makes
 * one; a plain object with a callback, where an AbortController with the call's listeners costs
 * about 4.4 µs (in-process, BENCHMARKS.md).
 */
export class CallAbort {
  aborted = false;
  /** Why the call was ended: compared by identity with the call's own reasons. */
  reason: unknown = undefined;

  constructor(private readonly onAbort: (reason: unknown) => void) {}

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort(reason);
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
