import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../protocol/events.js";
import { SqliteStore } from "../src/store/sqlite.js";

// the tables as schema 1 made them: a session's config in its row
const SCHEMA_1 = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, status TEXT NOT NULL, config TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX sessions_by_tenant ON sessions (tenant_id, id);
CREATE INDEX sessions_by_status ON sessions (status) WHERE status = 'running';
CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
PRAGMA user_version = 1;
`;
// what schema 2 made of them: the config apart, every event's JSON in its row
const SCHEMA_2 = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX sessions_by_tenant ON sessions (tenant_id, id);
CREATE INDEX sessions_by_status ON sessions (status) WHERE status = 'running';
CREATE TABLE session_configs (session_id TEXT PRIMARY KEY, config TEXT NOT NULL);
CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
PRAGMA user_version = 2;
`;
// what schema 3 made of them: a long event's JSON apart, a running session's status in its row
const SCHEMA_3 = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX sessions_by_tenant ON sessions (tenant_id, id);
CREATE INDEX sessions_by_status ON sessions (status) WHERE status = 'running';
CREATE TABLE session_configs (session_id TEXT PRIMARY KEY, config TEXT NOT NULL);
CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, data TEXT NOT NULL, body INTEGER, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
CREATE TABLE event_bodies (id INTEGER PRIMARY KEY, data TEXT NOT NULL);
PRAGMA user_version = 3;
`;
const CONFIG = { model: "default", tools: [], max_steps: 8, metadata: {} };
const MESSAGE: NewEvent[] = [
  { type: "message.user", data: { content: "go" } },
  { type: "turn.started", data: {} },
];
const PAGE_FRAME = 4096 + 24;

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "brain-schema-"));
  path = join(dir, "brain.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the SQLite store's schema", () => {
  it("opens a schema 1 file with every session as it was, its config moved to a table of its own", async () => {
    const old = new Database(path);
    old.exec(SCHEMA_1);
    const insert = old.prepare("INSERT INTO sessions VALUES (?, 'acme', ?, ?, '2026-12-01T00:00:00.000Z')");
    for (const [id, status] of [
      ["ses_idle", "idle"],
      ["ses_running", "running"],
      ["ses_closed", "closed"],
      ["ses_other", "idle"],
    ])
      insert.run(id, status, JSON.stringify(CONFIG));
    old.close();

    const store = new SqliteStore(path);
    try {
      expect(await store.getSession("ses_idle")).toEqual({
        id: "ses_idle",
        tenant_id: "acme",
        status: "idle",
        config: CONFIG,
        created_at: "2026-12-01T00:00:00.000Z",
      });
      expect((await store.getSession("ses_closed"))?.status).toBe("closed");
      expect((await store.sessionsWithStatus("running")).map((s) => s.id)).toEqual(["ses_running"]);
      expect((await store.listSessions("acme", 10)).map((s) => [s.id, s.status])).toEqual([
        ["ses_running", "running"],
        ["ses_other", "idle"],
        ["ses_idle", "idle"],
        ["ses_closed", "closed"],
      ]);
      // the running session counts against the tenant's turns, and a closed one takes nothing
      expect(await store.append("ses_idle", MESSAGE, { setStatus: "running", tenantTurnLimit: 1 })).toEqual({
        ok: false,
        status: "idle",
        tenantFull: true,
      });
      expect(await store.append("ses_closed", MESSAGE, { expectStatus: ["idle"] })).toEqual({
        ok: false,
        status: "closed",
      });
      const started = await store.append("ses_idle", MESSAGE, {
        expectStatus: ["idle"],
        setStatus: "running",
      });
      expect(started.ok).toBe(true);
      expect((await store.sessionsWithStatus("running")).map((s) => s.id).sort()).toEqual([
        "ses_idle",
        "ses_running",
      ]);
    } finally {
      await store.close();
    }
    const reopened = new Database(path, { readonly: true });
    try {
      expect(reopened.pragma("user_version", { simple: true })).toBe(4);
      // the configs moved to a table of their own, and the sessions' rows hold none
      const columns = reopened.prepare("SELECT name FROM pragma_table_info('sessions')").all();
      expect(columns.map((column) => (column as { name: string }).name)).toEqual([
        "id",
        "tenant_id",
        "status",
        "created_at",
      ]);
      expect(reopened.prepare("SELECT COUNT(*) AS n FROM session_configs").get()).toEqual({ n: 4 });
      // the running sessions in a table of their own (schema 4), the rows saying only idle or closed
      expect(reopened.prepare("SELECT session_id FROM running_sessions ORDER BY session_id").all()).toEqual([
        { session_id: "ses_idle" },
        { session_id: "ses_running" },
      ]);
      expect(reopened.prepare("SELECT COUNT(*) AS n FROM sessions WHERE status = 'running'").get()).toEqual({
        n: 0,
      });
    } finally {
      reopened.close();
    }
  });

  it("changes a session's status without writing its config again: a large one costs nothing more", async () => {
    const store = new SqliteStore(path);
    try {
      const config = { ...CONFIG, system: "You are careful. ".repeat(1250) };
      const created = { id: "ses_large", tenant_id: "acme", config, created_at: new Date().toISOString() };
      await store.createSession(created, { type: "session.created", data: { config } });
      const walBytes = () => statSync(`${path}-wal`).size;
      const grewBy = async (run: () => Promise<unknown>) => {
        const before = walBytes();
        await run();
        return walBytes() - before;
      };
      // the same events with and without a change of status: what the status adds is its own pages
      const withChange = await grewBy(() => store.append("ses_large", MESSAGE, { setStatus: "running" }));
      const without = await grewBy(() => store.append("ses_large", MESSAGE));
      const backToIdle = await grewBy(() => store.append("ses_large", MESSAGE, { setStatus: "idle" }));
      // one page of the running sessions' table, where the session's row and a status index were
      // two (schema 3) and the config's 20 KB five more (schema 1)
      expect(withChange - without).toBeLessThanOrEqual(PAGE_FRAME);
      expect(backToIdle - without).toBeLessThanOrEqual(PAGE_FRAME);
      expect((await store.getSession("ses_large"))?.config).toEqual(config);
    } finally {
      await store.close();
    }
  });

  it("opens a schema 2 file with every event as it was, and keeps a long event's JSON out of its row", async () => {
    const long = { content: "long ".repeat(1000) };
    const old = new Database(path);
    old.exec(SCHEMA_2);
    old.prepare("INSERT INTO sessions VALUES ('ses_old', 'acme', 'idle', '2026-12-01T00:00:00.000Z')").run();
    old.prepare("INSERT INTO session_configs VALUES ('ses_old', ?)").run(JSON.stringify(CONFIG));
    const insert = old.prepare(
      "INSERT INTO events VALUES ('ses_old', ?, 'message.user', '2026-12-01T00:00:00.000Z', ?)",
    );
    insert.run(1, JSON.stringify({ content: "short" }));
    insert.run(2, JSON.stringify(long));
    old.close();

    const store = new SqliteStore(path);
    try {
      const appended = await store.append("ses_old", [
        { type: "message.user", data: long },
        { type: "message.user", data: { content: "short again" } },
      ]);
      expect(appended.ok && appended.events.map((event) => event.seq)).toEqual([3, 4]);
      expect((await store.readEvents("ses_old", 0, 10)).map((event) => event.data)).toEqual([
        { content: "short" },
        long,
        long,
        { content: "short again" },
      ]);
      // a page bounded by bytes counts a long event's JSON wherever it is kept
      expect((await store.readEvents("ses_old", 2, 10, 100)).map((event) => event.seq)).toEqual([3]);
    } finally {
      await store.close();
    }
    const reopened = new Database(path, { readonly: true });
    try {
      expect(reopened.pragma("user_version", { simple: true })).toBe(4);
      // the row written before stays as it was; the one written since keeps its JSON apart
      const rows = reopened
        .prepare("SELECT seq, length(data) AS chars, body IS NOT NULL AS apart FROM events ORDER BY seq")
        .all();
      const json = JSON.stringify(long).length;
      expect(rows).toEqual([
        { seq: 1, chars: 19, apart: 0 },
        { seq: 2, chars: json, apart: 0 },
        { seq: 3, chars: 0, apart: 1 },
        { seq: 4, chars: 25, apart: 0 },
      ]);
      expect(reopened.prepare("SELECT length(data) AS chars FROM event_bodies").all()).toEqual([
        { chars: json },
      ]);
    } finally {
      reopened.close();
    }
  });

  it("opens a schema 3 file with its running sessions moved to a table of their own", async () => {
    const old = new Database(path);
    old.exec(SCHEMA_3);
    const insert = old.prepare("INSERT INTO sessions VALUES (?, ?, ?, '2026-12-01T00:00:00.000Z')");
    const config = old.prepare("INSERT INTO session_configs VALUES (?, ?)");
    for (const [id, tenant, status] of [
      ["ses_a_idle", "acme", "idle"],
      ["ses_a_running", "acme", "running"],
      ["ses_b_running", "beta", "running"],
      ["ses_b_closed", "beta", "closed"],
    ] as const) {
      insert.run(id, tenant, status);
      config.run(id, JSON.stringify(CONFIG));
    }
    old.close();

    const store = new SqliteStore(path);
    try {
      expect((await store.sessionsWithStatus("running")).map((s) => s.id).sort()).toEqual([
        "ses_a_running",
        "ses_b_running",
      ]);
      expect((await store.sessionsWithStatus("idle")).map((s) => s.id)).toEqual(["ses_a_idle"]);
      expect((await store.sessionsWithStatus("closed")).map((s) => s.id)).toEqual(["ses_b_closed"]);
      expect((await store.getSession("ses_b_running"))?.status).toBe("running");
      expect((await store.listSessions("beta", 10)).map((s) => [s.id, s.status])).toEqual([
        ["ses_b_running", "running"],
        ["ses_b_closed", "closed"],
      ]);
      // acme's running session takes its one place, until its turn ends
      expect(await store.append("ses_a_idle", MESSAGE, { setStatus: "running", tenantTurnLimit: 1 })).toEqual(
        { ok: false, status: "idle", tenantFull: true },
      );
      const ended = await store.append("ses_a_running", MESSAGE, {
        expectStatus: ["running"],
        setStatus: "idle",
      });
      expect(ended.ok).toBe(true);
      const started = await store.append("ses_a_idle", MESSAGE, { setStatus: "running", tenantTurnLimit: 1 });
      expect(started.ok).toBe(true);
      const closed = await store.append("ses_a_running", MESSAGE, {
        expectStatus: ["idle"],
        setStatus: "closed",
      });
      expect(closed.ok).toBe(true);
    } finally {
      await store.close();
    }
    const reopened = new Database(path, { readonly: true });
    try {
      expect(reopened.pragma("user_version", { simple: true })).toBe(4);
      expect(
        reopened.prepare("SELECT session_id, tenant_id FROM running_sessions ORDER BY session_id").all(),
      ).toEqual([
        { session_id: "ses_a_idle", tenant_id: "acme" },
        { session_id: "ses_b_running", tenant_id: "beta" },
      ]);
      expect(reopened.prepare("SELECT id, status FROM sessions ORDER BY id").all()).toEqual([
        { id: "ses_a_idle", status: "idle" },
        { id: "ses_a_running", status: "closed" },
        { id: "ses_b_closed", status: "closed" },
        { id: "ses_b_running", status: "idle" },
      ]);
      expect(
        reopened.prepare("SELECT name FROM sqlite_master WHERE name = 'sessions_by_status'").all(),
      ).toEqual([]);
    } finally {
      reopened.close();
    }
  });

  it("refuses a file a newer Brain has opened, leaving it as it was and letting go of it", async () => {
    const newer = new Database(path);
    newer.exec(SCHEMA_2);
    newer.pragma("user_version = 99");
    newer.close();
    expect(() => new SqliteStore(path)).toThrow(/newer Brain \(schema 99\); this one knows schema 4/);
    // the refused store holds no lock: the newer Brain opens its file as it left it
    const again = new Database(path);
    try {
      again.pragma("locking_mode = EXCLUSIVE");
      again.exec("BEGIN IMMEDIATE; COMMIT");
      expect(again.pragma("user_version", { simple: true })).toBe(99);
      const columns = again.prepare("SELECT name FROM pragma_table_info('events')").all();
      expect(columns.map((column) => (column as { name: string }).name)).not.toContain("body");
    } finally {
      again.close();
    }
  });
});
