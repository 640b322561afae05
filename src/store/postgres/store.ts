import { randomUUID } from "node:crypto";
import pg from "pg";
import type { NewEvent, StoredEvent } from "../../../protocol/events.js";
import type { SessionStatus } from "../../../protocol/session.js";
import { appendedEvent } from "../../events/event-json.js";
import { isoNow } from "../../iso-now.js";
import type { SessionRecord } from "../../sessions/session-record.js";
import {
  type EventRow,
  type IdempotencyRow,
  type SessionRow,
  toEvent,
  toIdempotencyRecord,
  toSession,
} from "../rows.js";
import type {
  AppendOptions,
  AppendResult,
  IdempotencyClaim,
  IdempotencyRecord,
  NewSession,
  Store,
} from "../store.js";
import { whileReachable } from "./retry.js";

interface AppendRow {
  ok: boolean;
  status: SessionStatus | null;
  first_seq: number;
  refusal: string | null;
}

const UNIQUE_VIOLATION = "23505";

const SESSION_COLUMNS = "id, tenant_id, status, config, created_at";

/** bigint columns as numbers: seqs and lease tokens stay far below 2^53. */
export const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/**
 * Sessions and events in PostgreSQL, shared by any number of Brain instances. `seq` is assigned in
 * the append's own transaction under a lock on the session's row, so appends from many instances
 * never collide or leave a gap; every append tells the instances (NOTIFY) what it appended.
 */
/** How long the store tries again while PostgreSQL cannot be reached, before it gives up. */
export interface StoreRetry {
  /** A read, which a request waits on: soon a 503. */
  readMs: number;
  /** An append, which a turn waits on: it carries its own id, so a retry never appends twice. */
  appendMs: number;
}

const DEFAULT_RETRY: StoreRetry = { readMs: 1000, appendMs: 10_000 };

export class PostgresStore implements Store {
  /** When expired idempotency keys were last swept: at most once a minute. */
  #sweptAt = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly retry: StoreRetry = DEFAULT_RETRY,
  ) {}

  /** A query retried while the server is away: reads, and writes made safe to run twice. */
  #query<R extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return whileReachable(() => this.pool.query<R>(sql, values), this.retry.readMs);
  }

  async createSession(
    session: NewSession,
    first: NewEvent,
  ): Promise<{ session: SessionRecord; event: StoredEvent }> {
    const at = isoNow();
    const firstJson = JSON.stringify(first.data);
    const insert = () =>
      this.pool.query(
        `WITH created AS (
           INSERT INTO brain_sessions (${SESSION_COLUMNS}, last_seq) VALUES ($1, $2, 'idle', $3, $4, 1) RETURNING id
         )
         INSERT INTO brain_events (session_id, seq, type, at, data) SELECT id, 1, $5, $6, $7 FROM created`,
        [
          session.id,
          session.tenant_id,
          JSON.stringify(session.config),
          session.created_at,
          first.type,
          at,
          firstJson,
        ],
      );
    await whileReachable(insert, this.retry.appendMs).catch((error: unknown) => {
      // the id is new: a unique violation is a retry of an insert that committed before its answer was lost
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    });
    return {
      session: { ...session, status: "idle" },
      event: appendedEvent(1, first, at, firstJson),
    };
  }

  async getSession(id: string): Promise<SessionRecord | undefined> {
    const { rows } = await this.#query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM brain_sessions WHERE id = $1`,
      [id],
    );
    return rows[0] && toSession(rows[0]);
  }

  async listSessions(
    tenantId: string,
    limit: number,
    before?: string,
    maxBytes?: number,
  ): Promise<SessionRecord[]> {
    const older = before === undefined ? "" : "AND id < $4";
    // the bound is applied by the server, as a page of events' is: no more rows than reach it
    const { rows } = await this.#query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM (
         SELECT ${SESSION_COLUMNS}, sum(length(config)) OVER (ORDER BY id DESC) - length(config) AS before
         FROM (SELECT ${SESSION_COLUMNS} FROM brain_sessions
               WHERE tenant_id = $1 ${older} ORDER BY id DESC LIMIT $2) page
       ) counted WHERE $3::bigint IS NULL OR before < $3 ORDER BY id DESC`,
      [tenantId, limit, maxBytes ?? null, ...(before === undefined ? [] : [before])],
    );
    return rows.map(toSession);
  }

  async append(
    sessionId: string,
    events: readonly NewEvent[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    const at = isoNow();
    const dataJson = events.map((event) => JSON.stringify(event.data));
    // the same id on every attempt: an append that committed before its answer was lost is found
    const appendId = randomUUID();
    const attempt = () =>
      this.pool.query<AppendRow>(
        "SELECT ok, status, first_seq, refusal FROM brain_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        [
          sessionId,
          events.map((event) => event.type),
          dataJson,
          at,
          options.expectStatus ?? null,
          options.setStatus ?? null,
          options.leaseToken ?? null,
          appendId,
          options.expectLastSeq ?? null,
          options.tenantTurnLimit ?? null,
        ],
      );
    const { rows } = await whileReachable(attempt, this.retry.appendMs);
    const row = rows[0];
    if (!row?.ok) {
      return {
        ok: false,
        status: row?.status ?? undefined,
        ...(row?.refusal === "lease_lost" && { leaseLost: true }),
        ...(row?.refusal === "moved" && { moved: true }),
        ...(row?.refusal === "tenant_full" && { tenantFull: true }),
      };
    }
    return {
      ok: true,
      events: events.map((event, i) => appendedEvent(row.first_seq + i, event, at, dataJson[i] as string)),
    };
  }

  async lastSeq(sessionId: string): Promise<number> {
    const { rows } = await this.#query<{ last_seq: number }>(
      "SELECT last_seq FROM brain_sessions WHERE id = $1",
      [sessionId],
    );
    return rows[0]?.last_seq ?? 0;
  }

  async readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    maxBytes?: number,
  ): Promise<StoredEvent[]> {
    if (maxBytes === undefined) {
      const { rows } = await this.#query<EventRow>(
        "SELECT seq, type, at, data FROM brain_events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        [sessionId, afterSeq, limit],
      );
      return rows.map(toEvent);
    }
    // the bound is applied by the server: a page never carries more than it takes to reach it
    const { rows } = await this.#query<EventRow>(
      `SELECT seq, type, at, data FROM (
         SELECT seq, type, at, data, sum(length(data)) OVER (ORDER BY seq) - length(data) AS before
         FROM (SELECT seq, type, at, data FROM brain_events
               WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) page
       ) counted WHERE before < $4 ORDER BY seq`,
      [sessionId, afterSeq, limit, maxBytes],
    );
    return rows.map(toEvent);
  }

  async sessionsWithStatus(status: SessionStatus): Promise<SessionRecord[]> {
    const { rows } = await this.#query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM brain_sessions WHERE status = $1`,
      [status],
    );
    return rows.map(toSession);
  }

  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyRecord | undefined> {
    if (claim.now - this.#sweptAt > 60_000) {
      this.#sweptAt = claim.now;
      await this.#query("DELETE FROM brain_idempotency_keys WHERE created_at < $1", [claim.expiredBefore]);
    }
    await this.#query(
      `DELETE FROM brain_idempotency_keys WHERE tenant_id = $1 AND key = $2
         AND (created_at < $3 OR (status IS NULL AND created_at < $4))`,
      [claim.tenantId, claim.key, claim.expiredBefore, claim.abandonedBefore],
    );
    // the same token on every attempt: a claim that committed before its answer was lost is found
    // again as this request's own, not taken for another's still running
    const token = randomUUID();
    const claimed = await this.#query(
      `INSERT INTO brain_idempotency_keys (tenant_id, key, fingerprint, created_at, claim) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, key) DO UPDATE SET claim = EXCLUDED.claim
         WHERE brain_idempotency_keys.claim = EXCLUDED.claim RETURNING 1`,
      [claim.tenantId, claim.key, claim.fingerprint, claim.now, token],
    );
    if (claimed.rowCount === 1) return undefined;
    const { rows } = await this.#query<IdempotencyRow>(
      "SELECT fingerprint, status, body FROM brain_idempotency_keys WHERE tenant_id = $1 AND key = $2",
      [claim.tenantId, claim.key],
    );
    const row = rows[0];
    return row && toIdempotencyRecord(row);
  }

  async answerIdempotencyKey(
    tenantId: string,
    key: string,
    answer: { status: number; body: string },
  ): Promise<void> {
    await this.#query(
      "UPDATE brain_idempotency_keys SET status = $1, body = $2 WHERE tenant_id = $3 AND key = $4",
      [answer.status, answer.body, tenantId, key],
    );
  }

  async releaseIdempotencyKey(tenantId: string, key: string): Promise<void> {
    await this.#query(
      "DELETE FROM brain_idempotency_keys WHERE tenant_id = $1 AND key = $2 AND status IS NULL",
      [tenantId, key],
    );
  }

  /** Ends the pool, which the bus and the leases of the same backend share: they close first. */
  async close(): Promise<void> {
    await this.pool.end();
  }
}
