import { type StopOutcome, type TurnLease, type TurnLeases, waitForEnd } from "./leases.js";

interface Held {
  lease: TurnLease;
  controller: AbortController;
  ended: Promise<void>;
}

/** Turn leases in one Brain process: the turns it runs are all there are. */
export class LocalTurnLeases implements TurnLeases {
  readonly #held = new Map<string, Held>();

  async acquire(sessionId: string): Promise<TurnLease | undefined> {
    if (this.#held.has(sessionId)) return undefined;
    const controller = new AbortController();
    let markEnded = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const lease: TurnLease = {
      sessionId,
      signal: controller.signal,
      release: () => {
        if (this.#held.get(sessionId)?.lease === lease) this.#held.delete(sessionId);
        markEnded();
      },
    };
    this.#held.set(sessionId, { lease, controller, ended });
    return lease;
  }

  async stop(sessionId: string, reason: string, waitMs: number): Promise<StopOutcome> {
    const held = this.#held.get(sessionId);
    if (!held) return "no_owner";
    held.controller.abort(reason);
    return waitForEnd(held.ended, waitMs);
  }

  async ownerless(sessionIds: readonly string[]): Promise<string[]> {
    return sessionIds.filter((id) => !this.#held.has(id));
  }

  held(): number {
    return this.#held.size;
  }

  async stopAll(reason: string): Promise<void> {
    const all = [...this.#held.values()];
    for (const held of all) held.controller.abort(reason);
    await Promise.all(all.map((held) => held.ended));
  }
}
