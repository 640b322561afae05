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
  /** The key, the arguments and, once settled, the result. */
  bytes: number;
}

export interface AnsweredCallsLimits {
  maxEntries?: number;
  /** Arguments reach 1 MiB a call and results have no bound here, so a count alone bounds nothing. */
  maxBytes?: number;
  keptMs?: number;
}

/**
 * The results of an idempotent tool's calls by tenant, tool and `Idempotency-Key`, kept in this
 * process for `keptMs`, at most `maxEntries` of them and `maxBytes` in all (the oldest go first): a
 * call sent again gets the first result without the handler running twice, and one sent again while
 * the first runs waits for it. A call that ended without a result (cancelled, outcome unknown) is
 * forgotten, so a retry runs.
 */
export class AnsweredCalls {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #keptMs: number;

  constructor(limits: AnsweredCallsLimits = {}) {
    this.#maxEntries = limits.maxEntries ?? 10_000;
    this.#maxBytes = limits.maxBytes ?? 64 * 1024 * 1024;
    this.#keptMs = limits.keptMs ?? 24 * 60 * 60 * 1000;
  }

  async claim(tenantId: string, tool: string, key: string, args: string, now = Date.now()): Promise<Claim> {
    // the tool is part of the key: a refund sent with its order's key must not get the charge's result
    const scope = JSON.stringify([tenantId, tool, key]);
    for (;;) {
      const entry = this.#entries.get(scope);
      if (entry && now - entry.at > this.#keptMs) this.#delete(scope);
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
      const added: Entry = {
        arguments: args,
        result,
        at: now,
        bytes: Buffer.byteLength(scope) + Buffer.byteLength(args),
      };
      this.#entries.set(scope, added);
      this.#bytes += added.bytes;
      this.#evict();
      let settled = false;
      return {
        kind: "run",
        // the first settling counts: a later one (a cleanup after the result) changes nothing
        settle: (value) => {
          if (settled) return;
          settled = true;
          if (this.#entries.get(scope) === added) {
            if (!value) this.#delete(scope);
            else {
              const resultBytes = Buffer.byteLength(JSON.stringify(value));
              added.bytes += resultBytes;
              this.#bytes += resultBytes;
              this.#evict();
            }
          }
          settle(value);
        },
      };
    }
  }

  #evict(): void {
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#delete(oldest);
    }
  }

  #delete(scope: string): void {
    const entry = this.#entries.get(scope);
    if (!entry) return;
    this.#bytes -= entry.bytes;
    this.#entries.delete(scope);
  }
}
