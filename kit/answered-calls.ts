import type { ResultObject } from "../protocol/result.js";

/** What a call with an idempotency key does: run the handler, answer the first call's result, or refuse. */
export type Claim =
  | { kind: "run"; settle: (result: ResultObject | undefined) => void }
  | { kind: "replay"; result: ResultObject }
  | { kind: "conflict" };

interface Entry {
  arguments: string;
  result: Promise<ResultObject | undefined>;
  at: number;
}

/**
 * The results of an idempotent tool's calls by tenant and `Idempotency-Key`, kept in this process
 * for `keptMs`, at most `max` of them (the oldest go first): a call sent again gets the first
 * result without the handler running twice, and one sent again while the first runs waits for it.
 * A call that ended without a result (cancelled, outcome unknown) is forgotten, so a retry runs.
 */
export class AnsweredCalls {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly max = 10_000,
    private readonly keptMs = 24 * 60 * 60 * 1000,
  ) {}

  async claim(tenantId: string, key: string, args: string, now = Date.now()): Promise<Claim> {
    const scope = JSON.stringify([tenantId, key]);
    for (;;) {
      const entry = this.#entries.get(scope);
      if (entry && now - entry.at > this.keptMs) this.#entries.delete(scope);
      else if (entry) {
        if (entry.arguments !== args) return { kind: "conflict" };
        const result = await entry.result;
        if (result) return { kind: "replay", result };
        continue;
      }
      let settle: (result: ResultObject | undefined) => void = () => {};
      const result = new Promise<ResultObject | undefined>((resolve) => {
        settle = resolve;
      });
      this.#entries.set(scope, { arguments: args, result, at: now });
      for (const [oldest] of this.#entries) {
        if (this.#entries.size <= this.max) break;
        this.#entries.delete(oldest);
      }
      let settled = false;
      return {
        kind: "run",
        // the first settling counts: a later one (a cleanup after the result) changes nothing
        settle: (value) => {
          if (settled) return;
          settled = true;
          if (!value && this.#entries.get(scope)?.result === result) this.#entries.delete(scope);
          settle(value);
        },
      };
    }
  }
}
