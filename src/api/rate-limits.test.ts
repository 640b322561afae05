import { describe, expect, it } from "vitest";
import { Secret } from "../../runtime/secret.js";
import { TenantRateLimits } from "./rate-limits.js";

const tenant = (id: string, requestsPerSecond?: number) => ({
  id,
  apiKey: new Secret("k"),
  maxConcurrentTurns: undefined,
  maxEventStreams: undefined,
  requestsPerSecond,
});

describe("tenant rate limits", () => {
  it("admits a burst of twice the rate, then the rate, and says how long to wait", () => {
    const limits = new TenantRateLimits([tenant("slow", 2), tenant("free")]);
    const admitted = Array.from({ length: 6 }, () => limits.admit("slow", 1000));
    expect(admitted).toEqual([0, 0, 0, 0, 1, 1]);
    // half a second later, one more token
    expect(limits.admit("slow", 1500)).toBe(0);
    expect(limits.admit("slow", 1500)).toBe(1);
    // a tenant without a limit, and one the config does not know, are never held back
    expect(Array.from({ length: 1000 }, () => limits.admit("free", 1000)).every((wait) => wait === 0)).toBe(
      true,
    );
  });

  it("rounds a slow rate's wait up to whole seconds", () => {
    const limits = new TenantRateLimits([tenant("trickle", 0.1)]);
    expect(limits.admit("trickle", 0)).toBe(0);
    expect(limits.admit("trickle", 0)).toBe(10);
    expect(limits.admit("trickle", 5000)).toBe(5);
  });
});
