/**
 * Runs tasks one at a time per key, in arrival order; tasks of different keys run concurrently.
 * A key's entry is dropped when its last task settles, so idle keys cost nothing.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    // the tail never rejects, so one failed task does not fail the ones queued behind it
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
