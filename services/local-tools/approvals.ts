import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type Answer = "yes" | "no";
export type ApprovalStatus = "pending" | Answer | "expired";

export interface Approval {
  id: string;
  tenant_id: string;
  session_id: string;
  /** The call that asked last: a question asked again after a restart moves here. */
  call_id: string;
  question: string;
  status: ApprovalStatus;
  created_at: string;
  expires_at: string;
  answered_at: string | null;
  answered_by: string | null;
}

interface Row {
  id: string;
  tenant_id: string;
  session_id: string;
  call_id: string;
  question: string;
  status: ApprovalStatus;
  created_ms: number;
  expires_ms: number;
  answered_ms: number | null;
  answered_by: string | null;
  delivered: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toApproval(row: Row): Approval {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    session_id: row.session_id,
    call_id: row.call_id,
    question: row.question,
    status: row.status,
    created_at: iso(row.created_ms) as string,
    expires_at: iso(row.expires_ms) as string,
    answered_at: iso(row.answered_ms),
    answered_by: row.answered_by,
  };
}

/** Why an answer was not recorded. Codes are API: the operator endpoints and CLI branch on them. */
export type AnswerRefusal = { code: "not_found" | "already_answered" | "expired"; message: string };

export class TooManyPending extends Error {
  constructor(limit: number, whose: "" | "of this tenant ") {
    super(
      `${limit} approvals ${whose}are already waiting for an operator; try again after some are answered`,
    );
  }
}

export type Settled = Answer | "expired" | "aborted";

/**
 * Approvals in SQLite, so a question asked survives a restart of the service: the operator can
 * still answer it, and the same question asked again in the same session (as a model does when a
 * call was lost) gets that answer instead of a second question. An answer is handed to one call
 * only: an approval a live call holds is never given to another (`#held`, in memory, since no
 * call outlives the process), and one whose answer reached a call is done with (`delivered`).
 * The file is opened exclusively: a second process on it fails at start rather than missing the
 * wake-ups of this one.
 */
export class ApprovalStore {
  readonly #db: Database.Database;
  readonly #waiters = new Map<string, Set<(settled: Settled) => void>>();
  /** Approvals a call in this process holds, from `open` until `release`. */
  readonly #held = new Set<string>();
  readonly #now: () => number;

  constructor(path: string, now: () => number = Date.now) {
    this.#now = now;
    mkdirSync(dirname(path), { recursive: true });
    this.#db = new Database(path, { timeout: 0 });
    try {
      this.#db.pragma("locking_mode = EXCLUSIVE");
      this.#db.pragma("journal_mode = WAL");
      // an answer a person gave must not be lost to a power cut
      this.#db.pragma("synchronous = FULL");
      this.#db.exec(`
        CREATE TABLE IF NOT EXISTS approvals (
          id TEXT PRIMARY KEY,
          tenant_id TEXT NOT NULL,
          session_id TEXT NOT NULL,
          call_id TEXT NOT NULL,
          question TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('pending', 'yes', 'no', 'expired')),
          created_ms INTEGER NOT NULL,
          expires_ms INTEGER NOT NULL,
          answered_ms INTEGER,
          answered_by TEXT,
          delivered INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (created_ms) WHERE status = 'pending';
        CREATE INDEX IF NOT EXISTS approvals_undelivered
          ON approvals (tenant_id, session_id, question) WHERE delivered = 0;
      `);
    } catch (error) {
      this.#db.close();
      if ((error as { code?: string }).code === "SQLITE_BUSY") {
        throw new Error(
          `${path} is in use by another local-tools process; stop it first, or set "store" to another file`,
        );
      }
      throw error;
    }
  }

  /**
   * The approval for a question, held by the asking call until `release`: an undelivered one of
   * the same tenant, session and question that no live call holds (its call was lost: pending, or
   * answered while no call was waiting), or a new pending one. Two calls asking the same question
   * at once get two approvals, so one answer cannot approve both.
   */
  open(ask: {
    tenant_id: string;
    session_id: string;
    call_id: string;
    question: string;
    timeoutMs: number;
    maxPending: number;
    /** So that one tenant's questions cannot fill the operator's queue for the others. */
    maxPendingPerTenant: number;
  }): Approval {
    return this.#db.transaction(() => {
      const now = this.#now();
      this.#expireDue(now);
      const candidates = this.#db
        .prepare(
          `SELECT * FROM approvals WHERE tenant_id = ? AND session_id = ? AND question = ? AND delivered = 0
             AND status IN ('pending', 'yes', 'no') ORDER BY created_ms`,
        )
        .all(ask.tenant_id, ask.session_id, ask.question) as Row[];
      const earlier = candidates.find((row) => !this.#held.has(row.id));
      if (earlier) {
        this.#db.prepare("UPDATE approvals SET call_id = ? WHERE id = ?").run(ask.call_id, earlier.id);
        this.#held.add(earlier.id);
        return toApproval({ ...earlier, call_id: ask.call_id });
      }
      const pending = this.#db
        .prepare(
          `SELECT count(*) AS total, coalesce(sum(tenant_id = ?), 0) AS tenant
             FROM approvals WHERE status = 'pending'`,
        )
        .get(ask.tenant_id) as { total: number; tenant: number };
      if (pending.total >= ask.maxPending) throw new TooManyPending(ask.maxPending, "");
      if (pending.tenant >= ask.maxPendingPerTenant) {
        throw new TooManyPending(ask.maxPendingPerTenant, "of this tenant ");
      }
      const row: Row = {
        id: `apr_${randomBytes(12).toString("base64url")}`,
        tenant_id: ask.tenant_id,
        session_id: ask.session_id,
        call_id: ask.call_id,
        question: ask.question,
        status: "pending",
        created_ms: now,
        expires_ms: now + ask.timeoutMs,
        answered_ms: null,
        answered_by: null,
        delivered: 0,
      };
      this.#db
        .prepare(
          `INSERT INTO approvals (id, tenant_id, session_id, call_id, question, status, created_ms, expires_ms)
           VALUES (@id, @tenant_id, @session_id, @call_id, @question, @status, @created_ms, @expires_ms)`,
        )
        .run(row);
      this.#held.add(row.id);
      return toApproval(row);
    })();
  }

  get(id: string): Approval | undefined {
    this.#expireDue(this.#now());
    const row = this.#db.prepare("SELECT * FROM approvals WHERE id = ?").get(id) as Row | undefined;
    return row && toApproval(row);
  }

  /** Pending approvals, oldest first, at most `limit`. */
  pending(limit: number): Approval[] {
    this.#expireDue(this.#now());
    const rows = this.#db
      .prepare("SELECT * FROM approvals WHERE status = 'pending' ORDER BY created_ms LIMIT ?")
      .all(limit) as Row[];
    return rows.map(toApproval);
  }

  /** Record a person's answer and wake the call waiting for it, if one is. */
  answer(id: string, answer: Answer, by: string): Approval | AnswerRefusal {
    const now = this.#now();
    this.#expireDue(now);
    const changed = this.#db
      .prepare(
        "UPDATE approvals SET status = ?, answered_ms = ?, answered_by = ? WHERE id = ? AND status = 'pending'",
      )
      .run(answer, now, by, id).changes;
    const approval = this.get(id);
    if (!approval) return { code: "not_found", message: `no approval ${id}` };
    if (changed === 0) {
      return approval.status === "expired"
        ? { code: "expired", message: `approval ${id} expired at ${approval.expires_at} without an answer` }
        : { code: "already_answered", message: `approval ${id} was already answered ${approval.status}` };
    }
    this.#settle(id, answer);
    return approval;
  }

  /** Wait until the approval is answered, expires, or `signal` fires. */
  waitFor(approval: Approval, signal: AbortSignal): Promise<Settled> {
    if (approval.status !== "pending") return Promise.resolve(approval.status);
    // an abort that came first fires no event: without this the call would wait until expiry
    if (signal.aborted) return Promise.resolve("aborted");
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(approval.id) ?? new Set();
      this.#waiters.set(approval.id, waiters);
      const finish = (settled: Settled) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        waiters.delete(finish);
        if (waiters.size === 0) this.#waiters.delete(approval.id);
        resolve(settled);
      };
      const onAbort = () => finish("aborted");
      const timer = setTimeout(
        () => {
          const expired = this.#db
            .prepare("UPDATE approvals SET status = 'expired' WHERE id = ? AND status = 'pending'")
            .run(approval.id).changes;
          // an answer that won the race is the answer
          finish(expired > 0 ? "expired" : ((this.get(approval.id)?.status ?? "expired") as Settled));
        },
        Math.max(0, Date.parse(approval.expires_at) - this.#now()),
      );
      signal.addEventListener("abort", onAbort, { once: true });
      waiters.add(finish);
    });
  }

  /** The answer reached a caller: the same question asked again is a new question. */
  markDelivered(id: string): void {
    this.#db.prepare("UPDATE approvals SET delivered = 1 WHERE id = ?").run(id);
  }

  /** The call that opened the approval is over; undelivered, it goes to the next call that asks. */
  release(id: string): void {
    this.#held.delete(id);
  }

  close(): void {
    for (const waiters of this.#waiters.values()) for (const finish of [...waiters]) finish("aborted");
    this.#db.close();
  }

  #expireDue(now: number): void {
    this.#db
      .prepare("UPDATE approvals SET status = 'expired' WHERE status = 'pending' AND expires_ms <= ?")
      .run(now);
  }

  #settle(id: string, settled: Settled): void {
    for (const finish of [...(this.#waiters.get(id) ?? [])]) finish(settled);
  }
}
