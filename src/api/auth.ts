import { hash, timingSafeEqual } from "node:crypto";
import type { Tenant } from "../config/load.js";

function digest(value: string): Buffer {
  // one call, no Hash object: every request is authenticated with it
  return hash("sha256", value, "buffer");
}

/** The bearer token of an Authorization header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/**
 * Maps API keys to tenants. Keys are compared as SHA-256 digests with timingSafeEqual, against
 * every tenant every time, so neither the key's bytes nor which tenant matched show in the timing.
 */
export class Authenticator {
  readonly #keys: { tenantId: string; digest: Buffer }[];

  constructor(tenants: readonly Tenant[]) {
    this.#keys = tenants.map((tenant) => ({ tenantId: tenant.id, digest: digest(tenant.apiKey.reveal()) }));
  }

  tenantFor(token: string | undefined): string | undefined {
    if (token === undefined) return undefined;
    const presented = digest(token);
    let tenant: string | undefined;
    for (const key of this.#keys) {
      if (timingSafeEqual(key.digest, presented) && tenant === undefined) tenant = key.tenantId;
    }
    return tenant;
  }
}
