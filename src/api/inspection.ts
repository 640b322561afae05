import { hash, randomBytes } from "node:crypto";

interface Grant {
  tenantId: string;
  sessionId: string;
  /** Fires when the call returns: streams opened with the token end. */
  revoked: AbortController;
}

export interface InspectionPrincipal {
  tenantId: string;
  sessionId: string;
  revoked: AbortSignal;
}

export function newInspectionToken(): string {
  return `bit_${randomBytes(32).toString("base64url")}`;
}

export function digest(token: string): string {
  return hash("sha256", token, "base64url");
}

export interface InspectionGrant {
  token: string;
  /** The call has returned: the token stops working, and streams opened with it end. */
  release: () => void;
}

/**
 * Inspection tokens: one per tool call of a binding with inspect_session, good for reading that
 * session only, until the call returns. The seam between one Brain process and many: a service's
 * callback may reach any instance.
 */
export interface InspectionGrants {
  /** A grant for a call of the turn holding the lease with `leaseToken`, where leases have tokens. */
  issue(tenantId: string, sessionId: string, leaseToken?: number): Promise<InspectionGrant>;
  /** What a presented token may read, while its call is out. */
  principalFor(token: string): Promise<InspectionPrincipal | undefined>;
  /** Grants in force. */
  readonly size: number;
}

/**
 * Inspection grants of one Brain process. Only a digest of each token is kept, in memory; the
 * token itself lives in the request body that carries it and nowhere else in Brain.
 */
export class LocalInspectionGrants implements InspectionGrants {
  readonly #grants = new Map<string, Grant>();

  async issue(tenantId: string, sessionId: string): Promise<InspectionGrant> {
    const token = newInspectionToken();
    const key = digest(token);
    const grant: Grant = { tenantId, sessionId, revoked: new AbortController() };
    this.#grants.set(key, grant);
    return {
      token,
      release: () => {
        this.#grants.delete(key);
        grant.revoked.abort();
      },
    };
  }

  /** The grant for a presented token; the lookup is by digest, so its timing says nothing of the token. */
  async principalFor(token: string): Promise<InspectionPrincipal | undefined> {
    const grant = this.#grants.get(digest(token));
    return grant && { tenantId: grant.tenantId, sessionId: grant.sessionId, revoked: grant.revoked.signal };
  }

  get size(): number {
    return this.#grants.size;
  }
}
