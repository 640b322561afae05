import type pg from "pg";
import {
  digest,
  type InspectionGrant,
  type InspectionGrants,
  type InspectionPrincipal,
  newInspectionToken,
} from "../../api/inspection.js";
import type { Logger } from "../../telemetry/logger.js";
import type { PostgresNotifications } from "./notifications.js";

/**
 * Inspection grants in PostgreSQL, by digest, so that a tool service's callback may reach any
 * instance. A grant holds while its call is out and the turn's lease lives; when it is released,
 * every instance ends the streams opened with it (NOTIFY brain_revoke).
 */
export class PostgresInspectionGrants implements InspectionGrants {
  /** Streams opened here with a token, by its digest: they end when it is revoked. */
  readonly #revocations = new Map<string, AbortController>();
  #issued = 0;

  constructor(
    private readonly pool: pg.Pool,
    notifications: PostgresNotifications,
    private readonly logger: Logger,
  ) {
    notifications.on("brain_revoke", (key) => this.#revoked(key));
  }

  async issue(tenantId: string, sessionId: string, leaseToken?: number): Promise<InspectionGrant> {
    const token = newInspectionToken();
    const key = digest(token);
    await this.pool.query(
      "INSERT INTO brain_inspection_grants (digest, tenant_id, session_id, lease_token) VALUES ($1, $2, $3, $4)",
      [key, tenantId, sessionId, leaseToken ?? 0],
    );
    this.#issued += 1;
    let released = false;
    return {
      token,
      release: () => {
        if (released) return;
        released = true;
        this.#issued -= 1;
        this.#revoked(key);
        this.pool
          .query(
            "WITH gone AS (DELETE FROM brain_inspection_grants WHERE digest = $1) SELECT pg_notify('brain_revoke', $1)",
            [key],
          )
          .catch((error: unknown) =>
            this.logger.warn({ session_id: sessionId, err: error }, "could not revoke an inspection grant"),
          );
      },
    };
  }

  async principalFor(token: string): Promise<InspectionPrincipal | undefined> {
    const key = digest(token);
    const { rows } = await this.pool.query<{ tenant_id: string; session_id: string }>(
      `SELECT g.tenant_id, g.session_id FROM brain_inspection_grants g
       JOIN brain_turn_leases l ON l.session_id = g.session_id AND l.token = g.lease_token
       WHERE g.digest = $1 AND l.expires_at > clock_timestamp()`,
      [key],
    );
    const row = rows[0];
    if (!row) return undefined;
    let revocation = this.#revocations.get(key);
    if (!revocation) {
      revocation = new AbortController();
      this.#revocations.set(key, revocation);
    }
    return { tenantId: row.tenant_id, sessionId: row.session_id, revoked: revocation.signal };
  }

  get size(): number {
    return this.#issued;
  }

  #revoked(key: string): void {
    this.#revocations.get(key)?.abort();
    this.#revocations.delete(key);
  }
}
