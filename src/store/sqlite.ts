import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import type { SessionConfig, SessionStatus } from "../../protocol/session.js";
import { appendedEvent } from "../events/event-json.js";
import { isoNow } from "../iso-now.js";
import { packedMap } from "../packed.js";
import type { SessionRecord } from "../sessions/session-record.js";
import {
  type EventRow,
  type IdempotencyRow,
  type SessionRow,
  toEvent,
  toIdempotencyRecord,
  toSession,
} from "./rows.js";
import type {
  AppendOptions,
  AppendResult,
  IdempotencyClaim,
  IdempotencyRecord,
  NewSession,
  Store,
} from "./store.js";

const SCHEMA_VERSION = 4;

/**
 * An event whose JSON is longer than this is kept in `event_bodies`, its row in `events` left
 * small. The events table is clustered on (session_id, seq), so a row is a key of its B-tree:
 * a large one (a session.created holding a long system prompt, a long tool result) made every
 * later append of its session that split or balanced its pages move it again, 2× a turn's
 * appends for a 20 KB prompt (BENCHMARKS.md). SQLite keeps up to about 1,000 bytes of a row in
 * its page at the default 4 KiB page size.
 */
const INLINE_EVENT_CHARS = 1024;

/**
 * Sessions whose head (status, tenant, last seq) an append takes from memory rather than from two
 * reads, and a read of the session as well. The busy ones stay: a session appended to again goes
 * in anew, and the oldest go first.
 */
export const HEADS_KEPT = 1024;

/**
 * The most events an append writes with one INSERT: a step's assistant message and its calls,
 * mostly. An append of more writes a row a statement.
 */
const ROWS_AT_ONCE = 16;

/** Whether events serialized as `jsons` go in one INSERT: a few, none long enough for a body of its own. */
function fitsOneInsert(jsons: readonly string[]): boolean {
  if (jsons.length === 0 || jsons.length > ROWS_AT_ONCE) return false;
  for (const json of jsons) if (json.length > INLINE_EVENT_CHARS) return false;
  return true;
}

/** What an append checks of its session before it writes, and what it leaves behind. */
interface SessionHead {
  status: SessionStatus;
  tenantId: string;
  lastSeq: number;
  /** What a session's row never changes of once created, from its creation or its first read. */
  fixed?: { config: SessionConfig; createdAt: string };
}

/** The head an append of `count` events leaves its session with, its status then `status`. */
const headAfter = (head: SessionHead, count: number, status: SessionStatus): SessionHead => ({
  status,
  tenantId: head.tenantId,
  lastSeq: head.lastSeq + count,
  fixed: head.fixed,
});

/** An append's result, and the head it leaves its session with once committed. */
interface AppendOutcome {
  result: AppendResult;
  head?: SessionHead;
}

const MIGRATION = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_tenant ON sessions (tenant_id, id);
CREATE TABLE IF NOT EXISTS running_sessions (
  session_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_configs (
  session_id TEXT PRIMARY KEY,
  config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  data TEXT NOT NULL,
  body INTEGER,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_bodies (
  id INTEGER PRIMARY KEY,
  data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  tenant_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER,
  body TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_at);
`;

/**
 * Schema 1 kept a session's config in its row. A status change rewrites the row, and SQLite reads
 * the whole of a row to write it: a large config (a system prompt, a script) was read from its
 * overflow pages at every turn's start and end, and written again (36 KiB of WAL a change for a
 * 20 KB system prompt; BENCHMARKS.md). Schema 2 keeps configs in a table of their own.
 */
const FROM_SCHEMA_1 = `
CREATE TABLE session_configs (session_id TEXT PRIMARY KEY, config TEXT NOT NULL);
INSERT INTO session_configs (session_id, config) SELECT id, config FROM sessions;
ALTER TABLE sessions DROP COLUMN config;
`;

/**
 * Schema 2 kept every event's JSON in its row. Rows written before stay as they are: moving the
 * large ones would rewrite a whole log as Brain starts, and they read the same either way.
 */
const FROM_SCHEMA_2 = "ALTER TABLE events ADD COLUMN body INTEGER;";

/**
 * Schema 3 kept a running session's status in its row, with a partial index of the running ones: a
 * turn's start and end each wrote the row's page and the index's. Schema 4 keeps the sessions that
 * run a turn in a small table of their own, a row each while the turn runs, so a turn's status
 * changes write one page of a tree that holds only the running sessions; a session's row says only
 * whether it is closed.
 */
const FROM_SCHEMA_3 = `
CREATE TABLE running_sessions (session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO running_sessions (session_id, tenant_id) SELECT id, tenant_id FROM sessions WHERE status = 'running';
UPDATE sessions SET status = 'idle' WHERE status = 'running';
DROP INDEX sessions_by_status;
`;

/** A session's status: its row's (idle or closed), unless it runs a turn. */
const STATUS = "CASE WHEN r.session_id IS NULL THEN s.status ELSE 'running' END";

/** What a session's row says of a status: whether the session is closed. */
const rowStatus = (status: SessionStatus): SessionStatus => (status === "closed" ? "closed" : "idle");

/** Sessions, each with its config: the statements below add which. */
const SELECT_SESSIONS = `SELECT s.id, s.tenant_id, ${STATUS} AS status, c.config, s.created_at FROM sessions s JOIN session_configs c ON c.session_id = s.id LEFT JOIN running_sessions r ON r.session_id = s.id`;

export class StoreInUseError extends Error {
  constructor(readonly path: string) {
    super(`${path} is in use by another process (another Brain?); each Brain needs its own SQLite file`);
    this.name = "StoreInUseError";
  }
}

/**
 * The embedded store: one SQLite file in WAL mode. Writes are synchronous, and this process is
 * the file's only writer, so an append's read-check-write is atomic without any lock of ours,
 * whether it writes in a transaction or in the one statement SQLite commits by itself.
 * synchronous=NORMAL keeps every commit through a crash of Brain (kill -9); only a power loss
 * can take the last commits, the usual WAL trade.
 */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #statements;
  readonly #appendTx;
  readonly #claimTx;
  /**
   * The heads of the sessions last appended to, as their last commit left them. This process is
   * the file's only writer (exclusive locking), and a head is kept only once its transaction has
   * committed, so it is the row's: an append reads its session's status and last seq from here,
   * two statements fewer of the four or five an append runs.
   */
  readonly #heads = new Map<string, SessionHead>();
  /** `#insertRows`'s statements, by how many rows they insert. */
  readonly #insertRowsOf: Database.Statement[] = [];
  /** When expired idempotency keys were last swept: at most once a minute. */
  #sweptAt = 0;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    // a live owner keeps its lock for as long as it runs: waiting longer would not help
    this.#db = new Database(path, { timeout: 500 });
    // One process owns the file: exclusive locking spares every commit its file locks (a third
    // of an append's cost), and a second Brain on the same file is refused instead of ending the
    // first one's running turns as if they had crashed.
    this.#db.pragma("locking_mode = EXCLUSIVE");
    try {
      this.#db.pragma("journal_mode = WAL");
      this.#db.exec("BEGIN IMMEDIATE; COMMIT");
    } catch (error) {
      this.#db.close();
      if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) {
        throw new StoreInUseError(path);
      }
      throw error;
    }
    this.#db.pragma("synchronous = NORMAL");
    // 8 MiB of page cache, not better-sqlite3's 16: the working set is the newest events and the
    // session index, and the kernel's page cache holds the rest of the file anyway
    this.#db.pragma("cache_size = -8192");
    // A checkpoint copies each page the WAL holds once and then fsyncs, on the event loop; with
    // 1,000 busy sessions the default 1,000-page WAL made checkpoints three quarters of an
    // append's cost. 10,000 pages (40 MiB) rewrites the same hot pages many times per checkpoint.
    this.#db.pragma("wal_autocheckpoint = 10000");
    const version = this.#db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      // let go of the file, and of its lock, for the Brain that wrote it
      this.#db.close();
      throw new Error(
        `${path} was written by a newer Brain (schema ${version}); this one knows schema ${SCHEMA_VERSION}`,
      );
    }
    this.#db.transaction(() => {
      if (version === 1) this.#db.exec(FROM_SCHEMA_1);
      if (version === 1 || version === 2) this.#db.exec(FROM_SCHEMA_2);
      if (version >= 1 && version <= 3) this.#db.exec(FROM_SCHEMA_3);
      this.#db.exec(MIGRATION);
      this.#db.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();

    const db = this.#db;
    this.#statements = {
      insertSession: db.prepare(
        "INSERT INTO sessions (id, tenant_id, status, created_at) VALUES (?, ?, ?, ?)",
      ),
      insertConfig: db.prepare("INSERT INTO session_configs (session_id, config) VALUES (?, ?)"),
      getSession: db.prepare<[string], SessionRow>(`${SELECT_SESSIONS} WHERE s.id = ?`),
      listSessions: db.prepare<[string, number], SessionRow>(
        `${SELECT_SESSIONS} WHERE s.tenant_id = ? ORDER BY s.id DESC LIMIT ?`,
      ),
      listSessionsBefore: db.prepare<[string, string, number], SessionRow>(
        `${SELECT_SESSIONS} WHERE s.tenant_id = ? AND s.id < ? ORDER BY s.id DESC LIMIT ?`,
      ),
      // the running ones are read from their own table, the others from every session's row
      runningSessions: db.prepare<[], SessionRow>(`${SELECT_SESSIONS} WHERE r.session_id IS NOT NULL`),
      sessionsWithStatus: db.prepare<[string], SessionRow>(
        `${SELECT_SESSIONS} WHERE s.status = ? AND r.session_id IS NULL`,
      ),
      countRunning: db.prepare<[string], { n: number }>(
        "SELECT COUNT(*) AS n FROM running_sessions WHERE tenant_id = ?",
      ),
      dropStaleKey: db.prepare<[string, string, number, number]>(
        "DELETE FROM idempotency_keys WHERE tenant_id = ? AND key = ? AND (created_at < ? OR (status IS NULL AND created_at < ?))",
      ),
      sweepKeys: db.prepare<[number]>("DELETE FROM idempotency_keys WHERE created_at < ?"),
      claimKey: db.prepare<[string, string, string, number]>(
        "INSERT OR IGNORE INTO idempotency_keys (tenant_id, key, fingerprint, created_at) VALUES (?, ?, ?, ?)",
      ),
      getKey: db.prepare<[string, string], IdempotencyRow>(
        "SELECT fingerprint, status, body FROM idempotency_keys WHERE tenant_id = ? AND key = ?",
      ),
      answerKey: db.prepare<[number, string, string, string]>(
        "UPDATE idempotency_keys SET status = ?, body = ? WHERE tenant_id = ? AND key = ?",
      ),
      releaseKey: db.prepare<[string, string]>(
        "DELETE FROM idempotency_keys WHERE tenant_id = ? AND key = ? AND status IS NULL",
      ),
      sessionStatus: db.prepare<[string], { status: SessionStatus; tenant_id: string }>(
        `SELECT ${STATUS} AS status, s.tenant_id FROM sessions s LEFT JOIN running_sessions r ON r.session_id = s.id WHERE s.id = ?`,
      ),
      // the events table is clustered on (session_id, seq): this is one descent of the primary key
      lastSeq: db.prepare<[string], { seq: number }>(
        "SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE session_id = ?",
      ),
      startRunning: db.prepare<[string, string]>(
        "INSERT INTO running_sessions (session_id, tenant_id) VALUES (?, ?)",
      ),
      stopRunning: db.prepare<[string]>("DELETE FROM running_sessions WHERE session_id = ?"),
      setRowStatus: db.prepare<[SessionStatus, string]>("UPDATE sessions SET status = ? WHERE id = ?"),
      insertBody: db.prepare<[string]>("INSERT INTO event_bodies (data) VALUES (?)"),
      // a body is looked up only for the rows that have one
      readEvents: db.prepare<[string, number, number], EventRow>(
        `SELECT e.seq, e.type, e.at,
           CASE WHEN e.body IS NULL THEN e.data ELSE (SELECT b.data FROM event_bodies b WHERE b.id = e.body) END AS data
         FROM events e WHERE e.session_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
      ),
    };
    this.#appendTx = db.transaction(
      (
        sessionId: string,
        events: readonly NewEvent[],
        jsons: readonly string[],
        options: AppendOptions,
      ): AppendOutcome => {
        const head = this.#heads.get(sessionId) ?? this.#readHead(sessionId);
        if (!head) return { result: { ok: false, status: undefined } };
        const refused = this.#refusalOf(head, options);
        if (refused) return { result: refused };
        const stored = this.#insertEvents(sessionId, events, jsons, head.lastSeq, fitsOneInsert(jsons));
        // a status is written only when it changes, so most commits touch only the events' pages
        let status = head.status;
        if (options.setStatus && options.setStatus !== status) {
          this.#writeStatus(sessionId, head.tenantId, status, options.setStatus);
          status = options.setStatus;
        }
        return {
          result: { ok: true, events: stored },
          head: headAfter(head, events.length, status),
        };
      },
    );
    this.#claimTx = db.transaction((claim: IdempotencyClaim): IdempotencyRecord | undefined => {
      const statements = this.#statements;
      if (claim.now - this.#sweptAt > 60_000) {
        statements.sweepKeys.run(claim.expiredBefore);
        this.#sweptAt = claim.now;
      }
      statements.dropStaleKey.run(claim.tenantId, claim.key, claim.expiredBefore, claim.abandonedBefore);
      if (statements.claimKey.run(claim.tenantId, claim.key, claim.fingerprint, claim.now).changes === 1)
        return undefined;
      const row = statements.getKey.get(claim.tenantId, claim.key);
      return row && toIdempotencyRecord(row);
    });
  }

  async createSession(
    session: NewSession,
    first: NewEvent,
  ): Promise<{ session: SessionRecord; event: StoredEvent }> {
    const config = JSON.stringify(session.config);
    const create = this.#db.transaction(() => {
      this.#statements.insertSession.run(session.id, session.tenant_id, "idle", session.created_at);
      this.#statements.insertConfig.run(session.id, config);
      return this.#appendTx(session.id, [first], [JSON.stringify(first.data)], {});
    });
    const { result, head } = create();
    if (!result.ok || !result.events[0]) throw new Error("session insert did not take");
    // a copy of its own, as a read would give: the caller keeps the object it passed
    if (head)
      this.#keepHead(session.id, {
        ...head,
        fixed: { config: JSON.parse(config), createdAt: session.created_at },
      });
    return { session: { ...session, status: "idle" }, event: result.events[0] };
  }

  /**
   * A session appended to lately is answered from its head: a message's read of its session, and
   * the two reads in the append that starts its turn, run no statement.
   */
  async getSession(id: string): Promise<SessionRecord | undefined> {
    const head = this.#heads.get(id);
    if (head?.fixed) {
      const { config, createdAt } = head.fixed;
      return { id, tenant_id: head.tenantId, status: head.status, config, created_at: createdAt };
    }
    const row = this.#statements.getSession.get(id);
    if (!row) return undefined;
    const session = toSession(row);
    if (head) head.fixed = { config: session.config, createdAt: session.created_at };
    return session;
  }

  async listSessions(
    tenantId: string,
    limit: number,
    before?: string,
    maxBytes = Number.POSITIVE_INFINITY,
  ): Promise<SessionRecord[]> {
    const rows =
      before === undefined
        ? this.#statements.listSessions.iterate(tenantId, limit)
        : this.#statements.listSessionsBefore.iterate(tenantId, before, limit);
    const sessions: SessionRecord[] = [];
    let bytes = 0;
    for (const row of rows) {
      sessions.push(toSession(row));
      bytes += row.config.length;
      // ends the iteration, which resets the statement
      if (bytes >= maxBytes) break;
    }
    return sessions;
  }

  async append(
    sessionId: string,
    events: readonly NewEvent[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    // serialized before anything is written: data that cannot be is refused with nothing stored
    const jsons = packedMap(events, (event) => JSON.stringify(event.data));
    const { result, head } =
      this.#appendAlone(sessionId, events, jsons, options) ??
      this.#appendTx(sessionId, events, jsons, options);
    if (head) this.#keepHead(sessionId, head);
    return result;
  }

  /**
   * An append that is one INSERT of its events, run alone: SQLite commits a statement as atomically
   * as a transaction, and this way without a transaction's BEGIN and COMMIT statements and the
   * result object better-sqlite3 builds for each (BENCHMARKS.md). Undefined for an append that
   * needs more than that one statement: a read of its session's head, a count of the tenant's
   * turns, a long event's body, a change of status.
   */
  #appendAlone(
    sessionId: string,
    events: readonly NewEvent[],
    jsons: readonly string[],
    options: AppendOptions,
  ): AppendOutcome | undefined {
    const head = this.#heads.get(sessionId);
    if (
      !head ||
      options.tenantTurnLimit !== undefined ||
      (options.setStatus !== undefined && options.setStatus !== head.status) ||
      !fitsOneInsert(jsons)
    )
      return undefined;
    const refused = this.#refusalOf(head, options);
    if (refused) return { result: refused };
    return {
      result: { ok: true, events: this.#insertEvents(sessionId, events, jsons, head.lastSeq, true) },
      head: headAfter(head, events.length, head.status),
    };
  }

  /** Why the append is refused, judged on its session's head; undefined when it may go ahead. */
  #refusalOf(head: SessionHead, options: AppendOptions): AppendResult | undefined {
    if (options.expectStatus && !options.expectStatus.includes(head.status)) {
      return { ok: false, status: head.status };
    }
    // one connection, one transaction at a time: the count cannot change before the commit
    if (
      options.tenantTurnLimit !== undefined &&
      (this.#statements.countRunning.get(head.tenantId) as { n: number }).n >= options.tenantTurnLimit
    ) {
      return { ok: false, status: head.status, tenantFull: true };
    }
    if (options.expectLastSeq !== undefined && head.lastSeq !== options.expectLastSeq) {
      return { ok: false, status: head.status, moved: true };
    }
    return undefined;
  }

  /**
   * The events' rows after `lastSeq`: in one INSERT when they fit in one (`fitsOneInsert`, which
   * the caller has judged), else a statement each, a long event's body first.
   */
  #insertEvents(
    sessionId: string,
    events: readonly NewEvent[],
    jsons: readonly string[],
    lastSeq: number,
    oneInsert: boolean,
  ): StoredEvent[] {
    const at = isoNow();
    const stored: StoredEvent[] = [];
    const values: unknown[] = [];
    for (let index = 0; index < events.length; index++) {
      const event = events[index] as NewEvent;
      const json = jsons[index] as string;
      const seq = lastSeq + index + 1;
      if (oneInsert) values.push(sessionId, seq, event.type, at, json, null);
      else {
        // a long event's row holds its body's id in place of its JSON
        const body =
          json.length > INLINE_EVENT_CHARS ? this.#statements.insertBody.run(json).lastInsertRowid : null;
        this.#insertRows(1).run(sessionId, seq, event.type, at, body === null ? json : "", body);
      }
      stored.push(appendedEvent(seq, event, at, json));
    }
    // spread, not bound as an array: better-sqlite3 reads an array an element at a time through V8's API
    if (oneInsert) this.#insertRows(events.length).run(...values);
    return stored;
  }

  /** The INSERT of `count` events' rows, prepared the first time an append has that many. */
  #insertRows(count: number): Database.Statement {
    let statement = this.#insertRowsOf[count];
    if (!statement) {
      const rows = Array.from({ length: count }, () => "(?, ?, ?, ?, ?, ?)").join(", ");
      statement = this.#db.prepare(
        `INSERT INTO events (session_id, seq, type, at, data, body) VALUES ${rows}`,
      );
      this.#insertRowsOf[count] = statement;
    }
    return statement;
  }

  async lastSeq(sessionId: string): Promise<number> {
    return (
      this.#heads.get(sessionId)?.lastSeq ?? (this.#statements.lastSeq.get(sessionId) as { seq: number }).seq
    );
  }

  /**
   * A change of status as schema 4 keeps it: a turn's start and end in `running_sessions`, and the
   * row written only when the session closes.
   */
  #writeStatus(sessionId: string, tenantId: string, from: SessionStatus, to: SessionStatus): void {
    if (from === "running") this.#statements.stopRunning.run(sessionId);
    if (to === "running") this.#statements.startRunning.run(sessionId, tenantId);
    if (rowStatus(from) !== rowStatus(to)) this.#statements.setRowStatus.run(rowStatus(to), sessionId);
  }

  /** The session's head as the file holds it; undefined if there is no such session. */
  #readHead(sessionId: string): SessionHead | undefined {
    const row = this.#statements.sessionStatus.get(sessionId);
    if (!row) return undefined;
    const { seq } = this.#statements.lastSeq.get(sessionId) as { seq: number };
    return { status: row.status, tenantId: row.tenant_id, lastSeq: seq };
  }

  /** Called once the head's transaction has committed: a rolled-back one must leave no trace here. */
  #keepHead(sessionId: string, head: SessionHead): void {
    // a closed session takes no more turns: its config is let go, and a read finds it in the file
    if (head.status === "closed") {
      this.#heads.delete(sessionId);
      return;
    }
    const kept = this.#heads.get(sessionId);
    if (kept) {
      // changed in place: a busy session's head outlives young collections, so a new one each
      // append would leave the old one as garbage in the old generation
      kept.status = head.status;
      kept.lastSeq = head.lastSeq;
      head = kept;
    }
    this.#heads.delete(sessionId);
    this.#heads.set(sessionId, head);
    if (this.#heads.size > HEADS_KEPT) {
      const oldest = this.#heads.keys().next().value;
      if (oldest !== undefined) this.#heads.delete(oldest);
    }
  }

  async readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    maxBytes?: number,
  ): Promise<StoredEvent[]> {
    // all() builds the rows in one native call: the turn start's catch-up reads this way
    if (maxBytes === undefined)
      return this.#statements.readEvents.all(sessionId, afterSeq, limit).map(toEvent);
    const events: StoredEvent[] = [];
    let bytes = 0;
    for (const row of this.#statements.readEvents.iterate(sessionId, afterSeq, limit)) {
      events.push(toEvent(row));
      bytes += row.data.length;
      // ends the iteration, which resets the statement
      if (bytes >= maxBytes) break;
    }
    return events;
  }

  async sessionsWithStatus(status: SessionStatus): Promise<SessionRecord[]> {
    const rows =
      status === "running"
        ? this.#statements.runningSessions.all()
        : this.#statements.sessionsWithStatus.all(status);
    return rows.map(toSession);
  }

  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyRecord | undefined> {
    return this.#claimTx(claim);
  }

  async answerIdempotencyKey(
    tenantId: string,
    key: string,
    answer: { status: number; body: string },
  ): Promise<void> {
    this.#statements.answerKey.run(answer.status, answer.body, tenantId, key);
  }

  async releaseIdempotencyKey(tenantId: string, key: string): Promise<void> {
    this.#statements.releaseKey.run(tenantId, key);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}
