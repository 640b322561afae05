import type { Tenant } from "../config/load.js";

/**
 * The event streams each tenant's clients hold open on this process, against the tenant's
 * `max_event_streams`: an open stream holds memory for as long as its client keeps it, and one
 * tenant's many must not take what another's need.
 */
export class TenantStreamLimits {
  readonly #limits = new Map<string, number>();
  readonly #open = new Map<string, number>();

  constructor(tenants: readonly Pick<Tenant, "id" | "maxEventStreams">[]) {
    for (const tenant of tenants)
      if (tenant.maxEventStreams !== undefined) this.#limits.set(tenant.id, tenant.maxEventStreams);
  }

  /** A place for one more stream of the tenant's, with the function that gives it back; undefined when none is left. */
  take(tenantId: string): (() => void) | undefined {
    const limit = this.#limits.get(tenantId);
    if (limit === undefined) return () => {};
    const open = this.#open.get(tenantId) ?? 0;
    if (open >= limit) return undefined;
    this.#open.set(tenantId, open + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#open.get(tenantId) ?? 1) - 1;
      if (left === 0) this.#open.delete(tenantId);
      else this.#open.set(tenantId, left);
    };
  }
}
