import { setTimeout as sleep } from "node:timers/promises";
import { ModelError } from "./provider.js";
import type { AttemptFailure } from "./provider-failure.js";

/**
 * Brain retries model calls itself, with the SDKs' own retries off: the official SDKs honour any
 * `retry-after` (up to 24 days), and the OpenAI SDK's wait between attempts ignores the abort
 * signal, so an interrupt would wait it out. Here every wait is bounded and ends on interrupt.
 */
export interface RetryPolicy {
  maxRetries: number;
  /** The longest single wait; a provider asking for longer ends the call instead. */
  maxWaitMs: number;
}

// the official SDKs' curve: 0.5 s doubling up to 8 s, each less up to 25 % jitter
const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8000;

export function backoffMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const delay = Math.min(INITIAL_DELAY_MS * 2 ** retry, MAX_DELAY_MS);
  return Math.min(delay * (1 - random() * 0.25), policy.maxWaitMs);
}

export type RetryDecision = { retry: true; waitMs: number } | { retry: false; why?: string };

/** Whether to retry after `done` failed attempts, and after how long. */
export function decideRetry(
  failure: AttemptFailure,
  done: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): RetryDecision {
  if (!failure.retryable) return { retry: false };
  if (done > policy.maxRetries)
    return { retry: false, why: `gave up after ${done} attempt${done === 1 ? "" : "s"}` };
  if (failure.retryAfterMs === undefined) return { retry: true, waitMs: backoffMs(done - 1, policy, random) };
  if (failure.retryAfterMs > policy.maxWaitMs) {
    return {
      retry: false,
      why: `it asks to retry after ${seconds(failure.retryAfterMs)} s, longer than max_retry_wait_seconds (${seconds(policy.maxWaitMs)} s)`,
    };
  }
  return { retry: true, waitMs: failure.retryAfterMs };
}

const seconds = (ms: number) => Math.round(ms) / 1000;

export interface RetryOptions {
  policy: RetryPolicy;
  signal: AbortSignal;
  /** Judge what an attempt threw. */
  judge: (error: unknown) => AttemptFailure;
  onRetry?: (failure: AttemptFailure, waitMs: number, attempt: number) => void;
}

/**
 * Run `attempt` until it succeeds, a failure is not retryable, or the retries run out; then throw
 * a `ModelError` with the failure's code. An interrupt ends the wait at once and is rethrown as is.
 */
export async function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let done = 1; ; done++) {
    try {
      return await attempt();
    } catch (error) {
      if (options.signal.aborted) throw error;
      const failure = options.judge(error);
      const decision = decideRetry(failure, done, options.policy);
      if (!decision.retry) {
        throw new ModelError(
          failure.code,
          decision.why ? `${failure.message} (${decision.why})` : failure.message,
        );
      }
      options.onRetry?.(failure, decision.waitMs, done + 1);
      await sleep(decision.waitMs, undefined, { signal: options.signal });
    }
  }
}
