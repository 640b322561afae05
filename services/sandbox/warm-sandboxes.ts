import type { Run } from "./runner.js";

/** A sandbox spawned and set up, waiting for its program, with the host directory its code goes in. */
export interface Prepared {
  run: Run;
  codeDir: string;
}

interface Entry extends Prepared {
  key: string;
  madeAt: number;
}

/**
 * Sandboxes made ready ahead of the calls that use them: after a run starts, one more for the
 * same workspace and language is spawned, so the session's next call finds its namespaces and
 * mounts in place and only has to start the program. At most `max` wait at once, one per
 * workspace and language; one unused for `idleMs` is killed.
 */
export class WarmSandboxes {
  readonly #ready = new Map<string, Entry>();

  constructor(
    private readonly max: number,
    private readonly idleMs: number,
  ) {}

  /** The waiting sandbox for `key`, if there is one still alive; it is the caller's from here. */
  take(key: string): Prepared | undefined {
    const entry = this.#ready.get(key);
    if (!entry) return undefined;
    this.#ready.delete(key);
    if (entry.run.waiting) return entry;
    entry.run.kill("cancelled");
    return undefined;
  }

  /** Make one ready for `key` unless one waits already or the pool is full. */
  offer(key: string, make: () => Prepared): void {
    if (this.#ready.has(key) || this.#ready.size >= this.max) return;
    const entry: Entry = { ...make(), key, madeAt: Date.now() };
    this.#ready.set(key, entry);
    // one that dies while waiting (its workspace gone, its user's process limit reached) leaves
    void entry.run.done.then(() => {
      if (this.#ready.get(key) === entry) this.#ready.delete(key);
    });
  }

  /** Kill the ones waiting longer than the idle time. */
  sweep(now: number): void {
    for (const entry of this.#ready.values()) {
      if (now - entry.madeAt >= this.idleMs) this.#discard(entry);
    }
  }

  /** Kill the ones whose key starts with `prefix` (a workspace that is being removed). */
  drop(prefix: string): void {
    for (const entry of this.#ready.values()) if (entry.key.startsWith(prefix)) this.#discard(entry);
  }

  async close(): Promise<void> {
    const entries = [...this.#ready.values()];
    for (const entry of entries) this.#discard(entry);
    await Promise.all(entries.map((entry) => entry.run.done));
  }

  get size(): number {
    return this.#ready.size;
  }

  #discard(entry: Entry): void {
    this.#ready.delete(entry.key);
    entry.run.kill("cancelled");
  }
}
