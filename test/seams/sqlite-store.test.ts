import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { newId } from "../../src/ids.js";
import { HEADS_KEPT, SqliteStore } from "../../src/store/sqlite.js";
import { describeStoreConformance } from "./store-conformance.js";

describeStoreConformance("sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-store-"));
  const path = join(dir, "brain.db");
  return {
    open: async () => new SqliteStore(path),
    reopen: async (store) => {
      await store.close();
      return new SqliteStore(path);
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

const config = { model: "default", tools: [] as string[], max_steps: 4, metadata: {} };
const createSession = (store: SqliteStore) =>
  store.createSession(
    {
      id: newId("ses"),
      tenant_id: "acme",
      config: structuredClone(config),
      created_at: new Date().toISOString(),
    },
    { type: "session.created", data: { config } },
  );

/** A store on a file of its own, removed after `test`; `reopen` closes it and opens the file again. */
async function withStore(
  test: (store: SqliteStore, reopen: () => Promise<SqliteStore>) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "brain-store-"));
  const path = join(dir, "brain.db");
  let store = new SqliteStore(path);
  try {
    await test(store, async () => {
      await store.close();
      store = new SqliteStore(path);
      return store;
    });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the SQLite store's heads of the sessions it appends to", () => {
  const message: NewEvent = { type: "message.user", data: { content: "go" } };

  it("answers a session from its head as the file holds it, its config a copy of the one created", async () => {
    await withStore(async (store, reopen) => {
      const created = await createSession(store);
      await store.append(created.session.id, [message], { setStatus: "running" });
      // what the caller does with its own objects afterwards is not the session's
      created.session.config.tools.push("echo");
      const fromHead = await store.getSession(created.session.id);
      expect(fromHead).toEqual({ ...created.session, status: "running", config });
      const reopened = await reopen();
      expect(await reopened.getSession(created.session.id)).toEqual(fromHead);
    });
  });

  it("reads a head pushed out by appends to other sessions from the file, as it was committed", async () => {
    await withStore(async (store) => {
      const { session } = await createSession(store);
      await store.append(session.id, [message, message], { setStatus: "running" });
      for (let i = 0; i < HEADS_KEPT; i++) await createSession(store);
      // the head is read again: a stale one would refuse this or repeat a seq
      expect(await store.lastSeq(session.id)).toBe(3);
      const appended = await store.append(session.id, [message], {
        expectStatus: ["running"],
        expectLastSeq: 3,
        setStatus: "idle",
      });
      expect(appended.ok && appended.events.map((event) => event.seq)).toEqual([4]);
      expect((await store.getSession(session.id))?.status).toBe("idle");
      expect(await store.append(session.id, [message], { expectStatus: ["running"] })).toEqual({
        ok: false,
        status: "idle",
      });
    });
  });

  it("answers for a closed session, whose head it lets go, from the file: its config, last seq and refusal", async () => {
    await withStore(async (store) => {
      const { session } = await createSession(store);
      await store.append(session.id, [message], { setStatus: "running" });
      const closed = await store.append(session.id, [{ type: "session.closed", data: {} }], {
        expectStatus: ["running"],
        setStatus: "closed",
      });
      expect(closed.ok && closed.events.map((event) => event.seq)).toEqual([3]);
      expect(await store.getSession(session.id)).toEqual({ ...session, status: "closed", config });
      expect(await store.lastSeq(session.id)).toBe(3);
      expect(await store.append(session.id, [message], { expectStatus: ["idle", "running"] })).toEqual({
        ok: false,
        status: "closed",
      });
    });
  });
});

describe("the SQLite store's writes of an append", () => {
  const message = (content: string): NewEvent => ({ type: "message.user", data: { content } });
  // a row SQLite cannot bind: the statement fails as it runs, after JSON had no complaint
  const unbindable = { type: undefined, data: {} } as unknown as NewEvent;

  const withSession = (test: (store: SqliteStore, sessionId: string) => Promise<void>) =>
    withStore(async (store) => test(store, (await createSession(store)).session.id));

  it("stores appends of one INSERT and of a statement a row alike, in order", async () => {
    await withSession(async (store, sessionId) => {
      const long = "x".repeat(5000);
      const appends = [
        [message("a")],
        Array.from({ length: 16 }, (_, i) => message(`b${i}`)),
        Array.from({ length: 17 }, (_, i) => message(`c${i}`)),
        [message("d"), message(long), message("e")],
      ];
      const sent: NewEvent[] = [];
      for (const events of appends) {
        const appended = await store.append(sessionId, events);
        expect(appended.ok && appended.events.map((event) => event.seq)).toEqual(
          events.map((_, i) => 2 + sent.length + i),
        );
        sent.push(...events);
      }
      const read = await store.readEvents(sessionId, 1, 100);
      expect(read.map(({ type, data }) => ({ type, data }))).toEqual(sent);
    });
  });

  it("leaves nothing of an append whose later row fails, however it was written", async () => {
    await withSession(async (store, sessionId) => {
      const long = message("y".repeat(5000));
      for (const events of [
        [message("a"), unbindable],
        [long, unbindable],
      ]) {
        await expect(store.append(sessionId, events)).rejects.toThrow();
        expect(await store.lastSeq(sessionId)).toBe(1);
      }
      const next = await store.append(sessionId, [message("b")], { expectLastSeq: 1 });
      expect(next.ok && next.events.map((event) => event.seq)).toEqual([2]);
      expect((await store.readEvents(sessionId, 0, 100)).map((event) => event.seq)).toEqual([1, 2]);
    });
  });
});
