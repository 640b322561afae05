import type { Tenant } from "../config/load.js";

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Each tenant's `requests_per_second` as a token bucket holding two seconds' worth (one at least): a tenant may
 * burst to twice its rate, then gets its rate. Pure but for the clock it is given; one per Brain
 * process, so N instances let a tenant make N times its rate in all.
 */
export class TenantRateLimits {
  readonly #rates = new Map<string, number>();
  readonly #buckets = new Map<string, Bucket>();

  constructor(tenants: readonly Tenant[]) {
    for (const tenant of tenants)
      if (tenant.requestsPerSecond !== undefined) this.#rates.set(tenant.id, tenant.requestsPerSecond);
  }

  /** Take one request from the tenant's bucket: 0 if admitted, else the seconds until one would be. */
  admit(tenantId: string, nowMs: number): number {
    const rate = this.#rates.get(tenantId);
    if (rate === undefined) return 0;
    const capacity = Math.max(1, 2 * rate);
    const bucket = this.#buckets.get(tenantId) ?? { tokens: capacity, at: nowMs };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((nowMs - bucket.at) / 1000) * rate);
    bucket.at = nowMs;
    this.#buckets.set(tenantId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
  }
}
