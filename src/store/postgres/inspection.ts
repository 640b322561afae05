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
 * How often the streams opened here ask whether their tokens still hold, and how long the question
 * may take: a revocation whose NOTIFY never came here (the LISTEN connection was down, or the owner
 * died and sent none) ends them within two of these of the token being refused, or of the database
 * not answering for it. docs/protocol.md states the bound.
 */
const RECHECK_MS = 1000;
/** Rounds a question may go unanswered before the streams it asks for end. */
const QUESTION_ROUNDS = 3;
/** The waits between tries of a revocation the database refused, doubling up to the second. */
const REVOKE_RETRY_FIRST_MS = 100;
const REVOKE_RETRY_MAX_MS = 1000;

/** A grant holds while its row is there and the lease of the turn that made it lives. */
const VALID_GRANTS = `SELECT g.digest, g.tenant_id, g.session_id FROM brain_inspection_grants g
  JOIN brain_turn_leases l ON l.session_id = g.session_id AND l.token = g.lease_token
  WHERE g.digest = ANY ($1) AND l.expires_at > clock_timestamp()`;

/**
 * Inspection grants in PostgreSQL, by digest, so that a tool service's callback may reach any
 * instance. A grant holds while its row is there and its turn's lease lives. When its call returns
 * the row is deleted and every instance told (NOTIFY brain_revoke); a DELETE the database refuses
 * is tried again until it is done, and meanwhile this instance refuses the token itself. An owner
 * that dies mid-call deletes nothing, but its lease runs out within lease_seconds, and the grant
 * with it. A NOTIFY may be missed, so the streams opened with a token also ask every RECHECK_MS
 * whether it still holds, and end when the database cannot say.
 */
export class PostgresInspectionGrants implements InspectionGrants {
  /** Streams opened here with a token, by its digest: they end when it is revoked. */
  readonly #revocations = new Map<string, AbortController>();
  /** Grants released here whose rows are not deleted yet: refused here all the same. */
  readonly #revoking = new Set<string>();
  #recheckTimer: NodeJS.Timeout | undefined;
  /** A question of #recheck's is out. */
  #asking = false;
  #roundsAsking = 0;
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
        this.#revoking.add(key);
        this.#revoked(key);
        this.#revoke(key, sessionId, REVOKE_RETRY_FIRST_MS);
      },
    };
  }

  async principalFor(token: string): Promise<InspectionPrincipal | undefined> {
    const key = digest(token);
    if (this.#revoking.has(key)) return undefined;
    const { rows } = await this.pool.query<{ tenant_id: string; session_id: string }>(VALID_GRANTS, [[key]]);
    const row = rows[0];
    // released while the question was out
    if (!row || this.#revoking.has(key)) return undefined;
    let revocation = this.#revocations.get(key);
    if (!revocation) {
      revocation = new AbortController();
      this.#revocations.set(key, revocation);
      this.#recheckSoon();
    }
    return { tenantId: row.tenant_id, sessionId: row.session_id, revoked: revocation.signal };
  }

  get size(): number {
    return this.#issued;
  }

  /** Delete the grant's row and tell every instance; tried again until the database takes it. */
  #revoke(key: string, sessionId: string, retryMs: number): void {
    this.pool
      .query(
        "WITH gone AS (DELETE FROM brain_inspection_grants WHERE digest = $1) SELECT pg_notify('brain_revoke', $1)",
        [key],
      )
      .then(
        () => this.#revoking.delete(key),
        (error: unknown) => {
          // a closed pool is a Brain shutting down: its leases, and the grants with them, run out
          if (this.pool.ending) return;
          if (retryMs === REVOKE_RETRY_FIRST_MS) {
            this.logger.warn(
              { session_id: sessionId, err: error },
              "could not revoke an inspection grant; trying again until the database takes it",
            );
          }
          setTimeout(
            () => this.#revoke(key, sessionId, Math.min(retryMs * 2, REVOKE_RETRY_MAX_MS)),
            retryMs,
          ).unref();
        },
      );
  }

  #recheckSoon(): void {
    if (this.#recheckTimer) return;
    this.#recheckTimer = setTimeout(() => this.#recheck(), RECHECK_MS);
    this.#recheckTimer.unref();
  }

  /**
   * One question at a time, while any stream opened here has a token to ask about: a question
   * still out holds a connection of the pool, and a second beside it would only wait longer.
   */
  #recheck(): void {
    this.#recheckTimer = undefined;
    if (this.#revocations.size === 0) return;
    if (this.#asking) {
      // a question may wait its turn for a connection of a busy pool, where query_timeout does
      // not count yet: only one unanswered for QUESTION_ROUNDS rounds says that nobody can tell
      // whether any of these tokens still holds
      this.#roundsAsking += 1;
      if (this.#roundsAsking >= QUESTION_ROUNDS)
        this.#endAll(new Error(`PostgreSQL did not answer within ${QUESTION_ROUNDS * RECHECK_MS} ms`));
    } else {
      this.#roundsAsking = 0;
      this.#asking = true;
      const keys = [...this.#revocations.keys()];
      // pg takes query_timeout per query too (though its types have it for a client only): past
      // it the connection is dropped, so a question the database never answers holds none
      const question: pg.QueryConfig & { query_timeout: number } = {
        text: VALID_GRANTS,
        values: [keys],
        query_timeout: RECHECK_MS,
      };
      this.pool
        .query<{ digest: string }>(question)
        .then(
          ({ rows }) => {
            const valid = new Set(rows.map((row) => row.digest));
            for (const key of keys) if (!valid.has(key)) this.#revoked(key);
          },
          (error: unknown) => this.#endAll(error),
        )
        .finally(() => {
          this.#asking = false;
        });
    }
    if (this.#revocations.size > 0 && !this.pool.ending) this.#recheckSoon();
  }

  #endAll(why: unknown): void {
    if (this.#revocations.size === 0) return;
    if (!this.pool.ending)
      this.logger.warn({ err: why }, "could not check inspection tokens; ending their streams");
    for (const key of [...this.#revocations.keys()]) this.#revoked(key);
  }

  #revoked(key: string): void {
    this.#revocations.get(key)?.abort();
    this.#revocations.delete(key);
  }
}
