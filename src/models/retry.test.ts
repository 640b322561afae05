import { describe, expect, it } from "vitest";
import { attemptFailure } from "./provider-failure.js";
import { backoffMs, decideRetry } from "./retry.js";

const policy = { maxRetries: 2, maxWaitMs: 60_000 };

describe("backoff", () => {
  it("doubles from 0.5 s up to 8 s, less up to 25 % jitter, and never past the longest wait", () => {
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffMs(retry, policy, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    expect(backoffMs(0, policy, () => 1)).toBe(375);
    expect(backoffMs(3, { maxRetries: 5, maxWaitMs: 50 }, () => 0)).toBe(50);
  });
});

describe("decideRetry", () => {
  const overloaded = attemptFailure("provider_overloaded", "overloaded");

  it("retries what may pass, as many times as allowed", () => {
    expect(decideRetry(overloaded, 1, policy, () => 0)).toEqual({ retry: true, waitMs: 500 });
    expect(decideRetry(overloaded, 2, policy, () => 0)).toEqual({ retry: true, waitMs: 1000 });
    expect(decideRetry(overloaded, 3, policy)).toEqual({ retry: false, why: "gave up after 3 attempts" });
  });

  it("never retries what will fail again", () => {
    expect(decideRetry(attemptFailure("provider_rejected", "bad"), 1, policy)).toEqual({ retry: false });
    expect(decideRetry(attemptFailure("provider_auth_failed", "no"), 1, policy)).toEqual({ retry: false });
  });

  it("waits what retry-after asks, unless that is longer than the longest wait", () => {
    expect(decideRetry({ ...overloaded, retryAfterMs: 1500 }, 1, policy)).toEqual({
      retry: true,
      waitMs: 1500,
    });
    expect(decideRetry({ ...overloaded, retryAfterMs: 120_000 }, 1, policy)).toEqual({
      retry: false,
      why: "it asks to retry after 120 s, longer than max_retry_wait_seconds (60 s)",
    });
  });
});
