import type pg from "pg";
import type { Logger } from "../../telemetry/logger.js";
import {
  LEASE_LOST,
  type StopOutcome,
  type TurnLease,
  type TurnLeases,
  waitForEnd,
} from "../../turns/leases.js";
import type { PostgresNotifications } from "./notifications.js";

interface Held {
  lease: TurnLease & { token: number };
  controller: AbortController;
  ended: Promise<void>;
  /** When the lease runs out unless renewed, by this instance's clock. */
  expiresAt: number;
  /** Where what befalls the lease is logged: its turn's logger, once the turn gave it. */
  logger: Logger;
}

/** How often a stop asked of another instance looks whether the turn has ended. */
const STOP_POLL_MS = 50;

/**
 * Turn leases in PostgreSQL. A lease is a row naming its owner instance, a token that grows with
 * every new owner (appends under the lease carry it: fencing), and when it runs out; the owner
 * renews its leases every third of `leaseSeconds`. A stop asked on any instance reaches the owner
 * by NOTIFY; a lease that ran out belongs to nobody, and its turn is taken over by whoever finds it.
 */
export class PostgresTurnLeases implements TurnLeases {
  readonly #held = new Map<string, Held>();
  readonly #acquiring = new Set<string>();
  readonly #renewal: NodeJS.Timeout;

  constructor(
    private readonly pool: pg.Pool,
    notifications: PostgresNotifications,
    private readonly instanceId: string,
    private readonly leaseSeconds: number,
    private readonly logger: Logger,
  ) {
    notifications.on("brain_stop", (payload) => this.#stopAsked(payload));
    this.#renewal = setInterval(() => this.#renew(), (leaseSeconds * 1000) / 3);
    this.#renewal.unref();
  }

  async acquire(sessionId: string): Promise<TurnLease | undefined> {
    // a row of this instance's that it no longer holds is a release still on its way: it is taken
    // again; so one acquire at a time here, or the second would take the first's row from it
    if (this.#held.has(sessionId) || this.#acquiring.has(sessionId)) return undefined;
    this.#acquiring.add(sessionId);
    const asked = Date.now();
    const { rows } = await this.pool
      .query<{ token: number }>(
        `INSERT INTO brain_turn_leases (session_id, owner, token, expires_at)
       VALUES ($1, $2, nextval('brain_lease_tokens'), clock_timestamp() + $3 * interval '1 second')
       ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
       WHERE brain_turn_leases.expires_at < clock_timestamp() OR brain_turn_leases.owner = $2
       RETURNING token`,
        [sessionId, this.instanceId, this.leaseSeconds],
      )
      .finally(() => this.#acquiring.delete(sessionId));
    const token = rows[0]?.token;
    if (token === undefined) return undefined;
    const controller = new AbortController();
    let markEnded = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const lease = {
      sessionId,
      token,
      signal: controller.signal,
      logUnder: (logger: Logger) => {
        const held = this.#held.get(sessionId);
        if (held?.lease === lease) held.logger = logger;
      },
      release: () => {
        const held = this.#held.get(sessionId);
        if (held?.lease !== lease) return;
        this.#held.delete(sessionId);
        markEnded();
        this.pool
          .query("DELETE FROM brain_turn_leases WHERE session_id = $1 AND token = $2", [sessionId, token])
          .catch((error: unknown) =>
            // renewals name only the leases still held, so this row runs out within lease_seconds
            // by itself: nobody can take the turn over before then
            held.logger.warn({ session_id: sessionId, err: error }, "could not release a turn lease"),
          );
      },
    };
    this.#held.set(sessionId, {
      lease,
      controller,
      ended,
      expiresAt: asked + this.leaseSeconds * 1000,
      logger: this.logger,
    });
    return lease;
  }

  async stop(sessionId: string, reason: string, waitMs: number): Promise<StopOutcome> {
    const deadline = Date.now() + waitMs;
    const held = this.#held.get(sessionId);
    if (held) {
      held.controller.abort(reason);
      return waitForEnd(held.ended, waitMs);
    }
    const owner = await this.#liveToken(sessionId);
    if (owner === undefined) return "no_owner";
    await this.pool.query("SELECT pg_notify('brain_stop', $1)", [JSON.stringify([sessionId, reason])]);
    while (Date.now() < deadline) {
      await sleep(STOP_POLL_MS);
      if ((await this.#liveToken(sessionId)) !== owner) return "ended";
    }
    return "still_running";
  }

  async ownerless(sessionIds: readonly string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const { rows } = await this.pool.query<{ session_id: string }>(
      "SELECT session_id FROM brain_turn_leases WHERE session_id = ANY ($1) AND expires_at > clock_timestamp()",
      [sessionIds],
    );
    const owned = new Set(rows.map((row) => row.session_id));
    return sessionIds.filter((id) => !owned.has(id));
  }

  held(): number {
    return this.#held.size;
  }

  async stopAll(reason: string): Promise<void> {
    clearInterval(this.#renewal);
    const all = [...this.#held.values()];
    for (const held of all) held.controller.abort(reason);
    await Promise.all(all.map((held) => held.ended));
  }

  /** The token of the session's lease while someone holds it, else undefined. */
  async #liveToken(sessionId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ token: number }>(
      "SELECT token FROM brain_turn_leases WHERE session_id = $1 AND expires_at > clock_timestamp()",
      [sessionId],
    );
    return rows[0]?.token;
  }

  #stopAsked(payload: string): void {
    let asked: unknown;
    try {
      asked = JSON.parse(payload);
    } catch {
      return;
    }
    if (!Array.isArray(asked) || typeof asked[0] !== "string") return;
    this.#held.get(asked[0])?.controller.abort(String(asked[1] ?? "interrupted"));
  }

  async #renew(): Promise<void> {
    if (this.#held.size === 0) return;
    const asked = Date.now();
    // a lease taken while the renewal is out is new, and not in its answer: it is not lost
    const before = [...this.#held];
    try {
      // each lease by its session and token, never every row of this instance: a lease released
      // whose DELETE failed must run out, not be renewed for as long as any other is held
      const { rows } = await this.pool.query<{ session_id: string; token: number }>(
        `UPDATE brain_turn_leases l SET expires_at = clock_timestamp() + $1 * interval '1 second'
         FROM unnest($2::text[], $3::bigint[]) AS held (session_id, token)
         WHERE l.session_id = held.session_id AND l.token = held.token AND l.expires_at > clock_timestamp()
         RETURNING l.session_id, l.token`,
        [
          this.leaseSeconds,
          before.map(([sessionId]) => sessionId),
          before.map(([, held]) => held.lease.token),
        ],
      );
      const renewed = new Map(rows.map((row) => [row.session_id, row.token]));
      for (const [sessionId, held] of before) {
        if (this.#held.get(sessionId) !== held) continue;
        if (renewed.get(sessionId) === held.lease.token) held.expiresAt = asked + this.leaseSeconds * 1000;
        else this.#lost(held, "another instance took the turn over");
      }
    } catch (error) {
      this.logger.warn({ err: error }, "could not renew turn leases");
      // past its time a lease may be another's already: its turn stops writing
      for (const [, held] of before) {
        if (Date.now() >= held.expiresAt) this.#lost(held, "the lease ran out while PostgreSQL was away");
      }
    }
  }

  #lost(held: Held, why: string): void {
    if (held.controller.signal.aborted) return;
    held.logger.warn({ session_id: held.lease.sessionId }, `lost a turn lease: ${why}`);
    held.controller.abort(LEASE_LOST);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
