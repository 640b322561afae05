/**
 * Node keeps a list of timers for each duration, and drops it when a timer that holds the process
 * open is cleared and leaves it empty, to make it anew at the next timer of that duration: a list,
 * an entry in its priority queue, an element of an object keyed by duration (which V8 keeps as a
 * dictionary). A Brain making one tool call at a time empties and remakes the lists of a call's two
 * timers at every call, about 7 k instructions a call (BENCHMARKS.md). An interval of each
 * duration, which runs nothing and holds no process open, keeps its list.
 */
export class TimerLists {
  readonly #kept = new Map<number, NodeJS.Timeout>();

  /** Keep the list of timers of `ms`, the duration as passed to setTimeout. */
  keep(ms: number): void {
    if (this.#kept.has(ms)) return;
    const interval = setInterval(keepList, ms);
    interval.unref();
    this.#kept.set(ms, interval);
  }

  close(): void {
    for (const interval of this.#kept.values()) clearInterval(interval);
    this.#kept.clear();
  }
}

function keepList(): void {}
