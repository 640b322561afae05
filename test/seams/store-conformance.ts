import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import { newId } from "../../src/ids.js";
import type { Store } from "../../src/store/store.js";
import { delayedStore } from "./delayed-store.js";

/** How a conformance run gets its stores: each implementation brings its own. */
export interface StoreHarness {
  /** A new, empty store. */
  open(): Promise<Store>;
  /** Close `store` and open the same data again, as a restart of Brain does. */
  reopen(store: Store): Promise<Store>;
  /** Remove everything the harness made. */
  cleanup(): Promise<void>;
}

const message = (n: number): NewEvent => ({ type: "message.user", data: { content: `m${n}` } });

function assertGapless(events: readonly StoredEvent[], from = 1): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => from + i));
}

async function newSession(store: Store, tenant = "acme") {
  const id = newId("ses");
  const created = await store.createSession(
    {
      id,
      tenant_id: tenant,
      config: { model: "default", tools: [], max_steps: 4, metadata: {} },
      created_at: new Date().toISOString(),
    },
    {
      type: "session.created",
      data: { config: { model: "default", tools: [], max_steps: 4, metadata: {} } },
    },
  );
  return created;
}

/**
 * What every store must do, run against each one: SQLite here, PostgreSQL when it is there. The
 * cases are the guarantees the rest of Brain leans on; nothing in them knows which store it tests.
 */
export function describeStoreConformance(name: string, makeHarness: () => StoreHarness): void {
  describe(`store conformance: ${name}`, () => {
    const harness = makeHarness();
    let store: Store;

    beforeAll(async () => {
      store = await harness.open();
    });
    afterAll(async () => {
      await store?.close();
      await harness.cleanup();
    });

    it("creates a session idle, with its first event at seq 1", async () => {
      const created = await newSession(store);
      expect(created.session.status).toBe("idle");
      expect(created.event).toMatchObject({
        seq: 1,
        type: "session.created",
        data: { config: { max_steps: 4 } },
      });
      expect(await store.getSession(created.session.id)).toEqual(created.session);
      expect(await store.lastSeq(created.session.id)).toBe(1);
      expect(await store.lastSeq("ses_none")).toBe(0);
      expect(await store.getSession("ses_none")).toBeUndefined();
    });

    it("assigns gapless seqs under concurrent appends, each append's events together", async () => {
      const { session } = await newSession(store);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.append(session.id, [message(i), message(i)].slice(0, 1 + (i % 2))),
        ),
      );
      for (const result of results) {
        if (!result.ok) throw new Error("an unconditional append was refused");
        const seqs = result.events.map((event) => event.seq);
        expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i));
      }
      const events = await store.readEvents(session.id, 0, 10_000);
      expect(events).toHaveLength(1 + 300);
      assertGapless(events);
      expect(await store.lastSeq(session.id)).toBe(301);
    });

    it("appends with expectStatus only from that status, and sets the status in the same step", async () => {
      const { session } = await newSession(store);
      const tries = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.append(session.id, [message(i)], { expectStatus: ["idle"], setStatus: "running" }),
        ),
      );
      expect(tries.filter((result) => result.ok)).toHaveLength(1);
      for (const refused of tries.filter((result) => !result.ok))
        expect(refused).toEqual({ ok: false, status: "running" });
      expect((await store.getSession(session.id))?.status).toBe("running");
      expect(await store.readEvents(session.id, 0, 100)).toHaveLength(2);
      const closed = await store.append(session.id, [{ type: "session.closed", data: {} }], {
        expectStatus: ["running"],
        setStatus: "closed",
      });
      expect(closed.ok).toBe(true);
      expect(await store.append(session.id, [message(1)], { expectStatus: ["idle", "running"] })).toEqual({
        ok: false,
        status: "closed",
      });
      expect(await store.append("ses_none", [message(1)])).toEqual({ ok: false, status: undefined });
    });

    it("fails an append that cannot be stored alone: those made beside it commit, gapless", async () => {
      const { session } = await newSession(store);
      // data JSON cannot hold: the append throws inside the store
      const unstorable = { type: "message.user", data: { content: 1n } } as unknown as NewEvent;
      const [first, broken, last] = await Promise.allSettled([
        store.append(session.id, [message(1)]),
        store.append(session.id, [message(2), unstorable]),
        store.append(session.id, [message(3)]),
      ]);
      expect(broken?.status).toBe("rejected");
      // appends at once commit in the order their transactions get the session (a pool's
      // connections race): each gets its own seq, with no gap where the broken one was
      const seqOf = (result: typeof first) =>
        result?.status === "fulfilled" && result.value.ok ? result.value.events[0]?.seq : undefined;
      expect([seqOf(first), seqOf(last)].sort()).toEqual([2, 3]);
      const events = await store.readEvents(session.id, 0, 100);
      expect(events).toHaveLength(3);
      expect(events[(seqOf(first) ?? 0) - 1]?.data).toEqual({ content: "m1" });
      expect(events[(seqOf(last) ?? 0) - 1]?.data).toEqual({ content: "m3" });
    });

    it("appends with expectLastSeq only onto that last event", async () => {
      const { session } = await newSession(store);
      const decided = await store.append(session.id, [message(1)], { expectLastSeq: 1 });
      expect(decided.ok && decided.events.map((event) => event.seq)).toEqual([2]);
      expect(await store.append(session.id, [message(2)], { expectLastSeq: 1 })).toEqual({
        ok: false,
        status: "idle",
        moved: true,
      });
      const racing = await Promise.all(
        [2, 2, 2].map((last) => store.append(session.id, [message(3)], { expectLastSeq: last })),
      );
      expect(racing.filter((result) => result.ok)).toHaveLength(1);
      expect(await store.lastSeq(session.id)).toBe(3);
    });

    it("starts a turn under a tenant turn limit only while fewer of the tenant's sessions run, one place to one start at once", async () => {
      const tenant = `limit-${Math.random().toString(36).slice(2)}`;
      const sessions = await Promise.all([1, 2, 3, 4, 5].map(() => newSession(store, tenant)));
      const start = (id: string, limit: number) =>
        store.append(id, [message(1)], {
          expectStatus: ["idle"],
          setStatus: "running",
          tenantTurnLimit: limit,
        });
      const [first, second, ...rest] = sessions.map(({ session }) => session.id) as [
        string,
        string,
        ...string[],
      ];
      expect(await start(first, 2)).toMatchObject({ ok: true });
      // four starts at once for the one place left: exactly one takes it
      const racing = await Promise.all([second, ...rest].map((id) => start(id, 2)));
      expect(racing.filter((result) => result.ok)).toHaveLength(1);
      for (const refused of racing.filter((result) => !result.ok))
        expect(refused).toEqual({ ok: false, status: "idle", tenantFull: true });
      // a refused start appended nothing; another tenant's sessions do not count
      for (const [i, id] of [second, ...rest].entries())
        expect(await store.lastSeq(id)).toBe(racing[i]?.ok ? 2 : 1);
      const other = await newSession(store, `${tenant}-other`);
      expect(await start(other.session.id, 1)).toMatchObject({ ok: true });
      // a session that ends its turn frees its place
      await store.append(first, [message(2)], { setStatus: "idle" });
      const waiting = [second, ...rest].find((_, i) => !racing[i]?.ok) as string;
      expect(await start(waiting, 2)).toMatchObject({ ok: true });
    });

    it("claims an idempotency key once, keeps its answer, and lets a failed or expired one be claimed again", async () => {
      const key = `key-${Math.random().toString(36).slice(2)}`;
      const now = Date.now();
      const claim = {
        tenantId: "acme",
        key,
        fingerprint: "f1",
        now,
        expiredBefore: now - 1000,
        abandonedBefore: now - 500,
      };
      expect(await store.claimIdempotencyKey(claim)).toBeUndefined();
      // the same key at once: in progress, with the first request's fingerprint
      expect(await store.claimIdempotencyKey({ ...claim, fingerprint: "f2" })).toEqual({
        fingerprint: "f1",
        answer: undefined,
      });
      // another tenant's key of the same name is its own
      expect(await store.claimIdempotencyKey({ ...claim, tenantId: "globex" })).toBeUndefined();
      await store.answerIdempotencyKey("acme", key, { status: 201, body: '{"id":"ses_1"}' });
      expect(await store.claimIdempotencyKey(claim)).toEqual({
        fingerprint: "f1",
        answer: { status: 201, body: '{"id":"ses_1"}' },
      });
      // a release leaves an answered key alone
      await store.releaseIdempotencyKey("acme", key);
      expect((await store.claimIdempotencyKey(claim))?.answer?.status).toBe(201);
      // past its day, the key is free again
      expect(
        await store.claimIdempotencyKey({ ...claim, now: now + 2000, expiredBefore: now + 1 }),
      ).toBeUndefined();

      const failed = { ...claim, key: `${key}-failed` };
      expect(await store.claimIdempotencyKey(failed)).toBeUndefined();
      await store.releaseIdempotencyKey("acme", failed.key);
      expect(await store.claimIdempotencyKey(failed)).toBeUndefined();
      // claimed and never answered for too long: abandoned, claimed afresh
      expect(
        await store.claimIdempotencyKey({ ...failed, now: now + 600, abandonedBefore: now + 1 }),
      ).toBeUndefined();
    });

    it("never shows a read a gap, while appends race it", async () => {
      const { session } = await newSession(store);
      let appending = true;
      const writer = (async () => {
        for (let i = 0; i < 150; i++) await store.append(session.id, [message(i), message(i)]);
        appending = false;
      })();
      const reads: StoredEvent[][] = [];
      while (appending) {
        const after = Math.floor(Math.random() * 20);
        const page = await store.readEvents(session.id, after, 1000);
        if (page.length > 0) assertGapless(page, after + 1);
        reads.push(page);
      }
      await writer;
      expect(reads.length).toBeGreaterThan(1);
      assertGapless(await store.readEvents(session.id, 0, 1000));
    });

    it("pages by count, and by bytes with at least one event a page", async () => {
      const { session } = await newSession(store);
      const big = "x".repeat(10_000);
      await store.append(
        session.id,
        Array.from(
          { length: 10 },
          (_, i) => ({ type: "message.user", data: { content: `${i}${big}` } }) as NewEvent,
        ),
      );
      expect((await store.readEvents(session.id, 0, 4)).map((event) => event.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.readEvents(session.id, 9, 100)).map((event) => event.seq)).toEqual([10, 11]);
      expect(await store.readEvents(session.id, 11, 100)).toEqual([]);
      // each event's data is over 10,000 bytes: a 25,000-byte page stops once it reaches the bound
      const byBytes = await store.readEvents(session.id, 1, 100, 25_000);
      expect(byBytes.map((event) => event.seq)).toEqual([2, 3, 4]);
      expect((await store.readEvents(session.id, 1, 100, 1)).map((event) => event.seq)).toEqual([2]);
      expect(byBytes[0]?.data).toEqual({ content: `0${big}` });
    });

    it("keeps seqs gapless and results true when appends resolve out of order", async () => {
      const slow = delayedStore(store, 15);
      const { session } = await newSession(store);
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => slow.append(session.id, [message(i)])),
      );
      const stored = await store.readEvents(session.id, 0, 1000);
      assertGapless(stored);
      const bySeq = new Map(stored.map((event) => [event.seq, event]));
      for (const result of results) {
        if (!result.ok) throw new Error("refused");
        for (const event of result.events) expect(bySeq.get(event.seq)).toEqual(event);
      }
    });

    it("lists a tenant's sessions newest first, paged by the last id", async () => {
      const tenant = `t-${randomUUID()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await newSession(store, tenant)).session.id);
      await newSession(store, `other-${tenant}`);
      const first = await store.listSessions(tenant, 3);
      expect(first.map((session) => session.id)).toEqual([ids[4], ids[3], ids[2]]);
      const rest = await store.listSessions(tenant, 3, ids[2]);
      expect(rest.map((session) => session.id)).toEqual([ids[1], ids[0]]);
      // each config is 58 bytes of JSON: 150 are reached by the third, and one session is always given
      const ofIds = (sessions: readonly { id: string }[]) => sessions.map((session) => session.id);
      expect(ofIds(await store.listSessions(tenant, 5, undefined, 150))).toEqual([ids[4], ids[3], ids[2]]);
      expect(ofIds(await store.listSessions(tenant, 5, ids[3], 150))).toEqual([ids[2], ids[1], ids[0]]);
      expect(ofIds(await store.listSessions(tenant, 5, undefined, 1))).toEqual([ids[4]]);
    });

    it("keeps every committed event and status across a restart", async () => {
      const { session } = await newSession(store);
      // a long event between short ones: a store may keep the long ones apart, never out of order
      const long: NewEvent = { type: "message.user", data: { content: "long ".repeat(2000) } };
      await store.append(session.id, [message(1), long, message(2)], { setStatus: "running" });
      store = await harness.reopen(store);
      const kept = await store.readEvents(session.id, 0, 100);
      assertGapless(kept);
      expect(kept.slice(1).map((event) => event.data)).toEqual([message(1).data, long.data, message(2).data]);
      expect(await store.lastSeq(session.id)).toBe(4);
      expect((await store.getSession(session.id))?.status).toBe("running");
      expect((await store.sessionsWithStatus("running")).map((found) => found.id)).toContain(session.id);
      const next = await store.append(session.id, [message(3)], {
        expectStatus: ["running"],
        setStatus: "idle",
      });
      expect(next.ok && next.events.map((event) => event.seq)).toEqual([5]);
    });
  });
}
