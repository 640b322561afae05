import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import type { SessionConfig, SessionStatus } from "../../protocol/session.js";
import type { SessionRecord } from "../sessions/session-record.js";

export interface NewSession {
  id: string;
  tenant_id: string;
  config: SessionConfig;
  created_at: string;
}

export interface AppendOptions {
  /** Append only if the session's status is one of these; the check and the append are one transaction. */
  expectStatus?: readonly SessionStatus[];
  /** Set the session's status in the same transaction. */
  setStatus?: SessionStatus;
  /**
   * Append only while the turn lease with this token is held (fencing): an owner that lost its
   * lease, and whose turn another instance took over, cannot write to the turn again. Stores of
   * one process, where a lease cannot be lost, have nothing to check.
   */
  leaseToken?: number;
  /**
   * Append only if the session's last event is still this one: a decision made on what the log held
   * (an approval answered once) is written only if nothing was appended since.
   */
  expectLastSeq?: number;
  /**
   * Append only if fewer than this many of the session's tenant's sessions are running: a turn's
   * start under the tenant's max_concurrent_turns. Counted in the append's transaction, and
   * starts of one tenant's turns are made one at a time, so two at once cannot both take the last
   * place.
   */
  tenantTurnLimit?: number;
}

export type AppendResult =
  | { ok: true; events: StoredEvent[] }
  | {
      ok: false;
      status: SessionStatus | undefined;
      leaseLost?: true;
      moved?: true;
      /** The tenant runs its tenantTurnLimit turns already. */
      tenantFull?: true;
    };

/**
 * Sessions and their append-only event logs. `seq` is assigned by the store, 1, 2, 3 … per
 * session with no gaps; an append returns only after its events are committed.
 */
export interface Store {
  createSession(
    session: NewSession,
    first: NewEvent,
  ): Promise<{ session: SessionRecord; event: StoredEvent }>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  /**
   * The tenant's sessions, newest first, strictly older than `before` when given: at most `limit`,
   * and with `maxBytes` no more than it takes for their config JSON to reach `maxBytes` (at least
   * one session, however large).
   */
  listSessions(tenantId: string, limit: number, before?: string, maxBytes?: number): Promise<SessionRecord[]>;
  append(sessionId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /** The seq of the session's last event, 0 when it has none or does not exist. */
  lastSeq(sessionId: string): Promise<number>;
  /**
   * Events after `afterSeq` in order, at most `limit`, and with `maxBytes` no more than it takes
   * for their `data` JSON to reach `maxBytes` (at least one event, however large).
   */
  readEvents(sessionId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<StoredEvent[]>;
  sessionsWithStatus(status: SessionStatus): Promise<SessionRecord[]>;
  /**
   * Claim an idempotency key for a request: undefined if this request is the first with it (do
   * the work, then `answerIdempotencyKey` or `releaseIdempotencyKey`), else what the key holds.
   * A key older than `claim.expiredBefore`, or claimed and never answered before
   * `claim.abandonedBefore`, is claimed afresh. Keys older than `expiredBefore` are swept.
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyRecord | undefined>;
  /** The answer to give again to a request with the same key and fingerprint. */
  answerIdempotencyKey(
    tenantId: string,
    key: string,
    answer: { status: number; body: string },
  ): Promise<void>;
  /** The request failed before doing anything: a retry with the key may try again. */
  releaseIdempotencyKey(tenantId: string, key: string): Promise<void>;
  close(): Promise<void>;
}

export interface IdempotencyClaim {
  tenantId: string;
  key: string;
  /** What the request was: a retry must be the same request. */
  fingerprint: string;
  /** Epoch milliseconds. */
  now: number;
  expiredBefore: number;
  abandonedBefore: number;
}

/** What a claimed key holds: the first request's fingerprint, and its answer once it has one. */
export interface IdempotencyRecord {
  fingerprint: string;
  answer: { status: number; body: string } | undefined;
}

/**
 * The store cannot be reached (a database away, restarting, or cut off). Nothing was lost: the
 * caller may try again later. The API answers 503; a turn ends `store_unavailable`.
 */
export class StoreUnavailableError extends Error {
  readonly code = "store_unavailable";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
