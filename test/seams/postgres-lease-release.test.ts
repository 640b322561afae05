import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { type OpenedBackend, openOnPostgres } from "./backends.js";

const LEASE_SECONDS = 2;

// PostgreSQL's alone: a release that the database refuses, while the instance holds other leases
describe("PostgreSQL turn leases: a release that failed", needs("postgres"), () => {
  let database: TestDatabase;
  let sql: pg.Client;
  const opened: OpenedBackend[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    opened.push(await openOnPostgres(database, LEASE_SECONDS), await openOnPostgres(database, LEASE_SECONDS));
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    // the database refuses to delete one session's lease, as a failing database would; a
    // sequence counts the attempts, since nothing else a failed statement did is kept
    await sql.query(`
      CREATE SEQUENCE release_attempts;
      CREATE FUNCTION refuse_release() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.session_id = 'ses_orphan' THEN
          PERFORM nextval('release_attempts');
          RAISE EXCEPTION 'the test refuses this release';
        END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER refuse_release BEFORE DELETE ON brain_turn_leases
        FOR EACH ROW EXECUTE FUNCTION refuse_release();`);
  });

  afterAll(async () => {
    await sql?.query("DROP TRIGGER refuse_release ON brain_turn_leases");
    await sql?.end();
    for (const backend of opened) {
      await backend.leases.stopAll("test over");
      await backend.close();
    }
    await database?.drop();
  });

  it("runs out within lease_seconds while the instance renews the leases it still holds", async () => {
    const [a, b] = opened as [OpenedBackend, OpenedBackend];
    const kept = await a.leases.acquire("ses_kept");
    const orphan = await a.leases.acquire("ses_orphan");
    if (!kept || !orphan) throw new Error("no lease");
    orphan.release();
    await expect
      .poll(async () => (await sql.query("SELECT is_called FROM release_attempts")).rows[0]?.is_called)
      .toBe(true);
    const refusedAt = Date.now();
    // the row is still there, and still somebody's: nobody may take the turn over yet
    expect(await b.leases.ownerless(["ses_orphan"])).toEqual([]);
    expect(await b.leases.acquire("ses_orphan")).toBeUndefined();

    await expect
      .poll(() => b.leases.ownerless(["ses_orphan", "ses_kept"]), {
        timeout: (LEASE_SECONDS + 2) * 1000,
        interval: 100,
      })
      .toEqual(["ses_orphan"]);
    // a renewal already on its way at the release may have given it one more lease
    expect(Date.now() - refusedAt).toBeLessThan((LEASE_SECONDS + 1) * 1000);
    const taken = await b.leases.acquire("ses_orphan");
    expect(taken).toBeDefined();
    // and the lease still held was renewed all along: it outlived its first lease_seconds
    expect(kept.signal.aborted).toBe(false);
    expect(await b.leases.ownerless(["ses_kept"])).toEqual([]);
    kept.release();
    taken?.release();
  });
});
