import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InspectionPrincipal } from "../../src/api/inspection.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { type OpenedBackend, openOnPostgres } from "./backends.js";

const LEASE_SECONDS = 2;
/** What docs/protocol.md promises of a stream whose token's revocation did not reach its instance. */
const STREAM_END_MS = 2000;
/** Timers fire a little late on a busy machine. */
const SLACK_MS = 500;

// PostgreSQL's alone: revocations that never reach an instance as a NOTIFY, on two instances
describe("PostgreSQL inspection grants: a revocation that went astray", needs("postgres"), () => {
  let database: TestDatabase;
  let sql: pg.Client;
  let owner: OpenedBackend;
  let other: OpenedBackend;

  beforeAll(async () => {
    database = await createTestDatabase();
    owner = await openOnPostgres(database, LEASE_SECONDS);
    other = await openOnPostgres(database, LEASE_SECONDS);
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    // the database refuses the first two revocations of one session's grants, as a failing
    // database would; a sequence counts the attempts, since nothing else a failed statement did is kept
    await sql.query(`
      CREATE SEQUENCE revoke_attempts;
      CREATE FUNCTION refuse_revoke() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.session_id = 'ses_refused' AND nextval('revoke_attempts') <= 2 THEN
          RAISE EXCEPTION 'the test refuses this revocation';
        END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER refuse_revoke BEFORE DELETE ON brain_inspection_grants
        FOR EACH ROW EXECUTE FUNCTION refuse_revoke();`);
  });

  afterAll(async () => {
    await sql?.end();
    for (const backend of [owner, other]) {
      await backend?.leases.stopAll("test over");
      await backend?.close();
    }
    await database?.drop();
  });

  /** A grant on `owner` for a call of a turn of `sessionId`, and a stream opened with it on `other`. */
  async function grantSeenElsewhere(sessionId: string) {
    const lease = await owner.leases.acquire(sessionId);
    if (!lease) throw new Error(`no lease for ${sessionId}`);
    const grant = await owner.inspection.issue("acme", sessionId, lease.token);
    const stream = await other.inspection.principalFor(grant.token);
    expect(stream?.revoked.aborted).toBe(false);
    return { lease, grant, stream };
  }

  /** Waits for a stream opened with a token to end, no longer than docs/protocol.md allows. */
  const ends = (stream: InspectionPrincipal | undefined) =>
    expect
      .poll(() => stream?.revoked.aborted, { timeout: STREAM_END_MS + SLACK_MS, interval: 50 })
      .toBe(true);

  it("refuses a token everywhere once its call returned, though the database refused the first revocations", async () => {
    const { lease, grant, stream } = await grantSeenElsewhere("ses_refused");
    grant.release();
    // the instance that made it knows at once
    expect(await owner.inspection.principalFor(grant.token)).toBeUndefined();
    await expect
      .poll(async () => (await sql.query("SELECT last_value FROM revoke_attempts")).rows[0]?.last_value)
      .toBe("3");
    expect(await other.inspection.principalFor(grant.token)).toBeUndefined();
    await ends(stream);
    // the turn's lease lived through it all: the grant went because it was revoked
    expect(lease.signal.aborted).toBe(false);
    lease.release();
  });

  it("ends a stream whose instance missed the revocation's NOTIFY", async () => {
    const { lease, grant, stream } = await grantSeenElsewhere("ses_missed");
    // the row goes as a revocation deletes it, but no NOTIFY reaches anyone: as when the
    // instance's LISTEN connection was down while it was sent
    await sql.query("DELETE FROM brain_inspection_grants WHERE session_id = 'ses_missed'");
    await ends(stream);
    grant.release();
    lease.release();
  });

  it("ends the streams of a token whose turn's owner died mid-call", async () => {
    const { lease, grant, stream } = await grantSeenElsewhere("ses_orphaned");
    // the owner never releases the grant; its lease runs out, as a dead owner's does
    await sql.query(
      "UPDATE brain_turn_leases SET expires_at = clock_timestamp() WHERE session_id = 'ses_orphaned'",
    );
    expect(await other.inspection.principalFor(grant.token)).toBeUndefined();
    await ends(stream);
    grant.release();
    lease.release();
  });

  it("ends the streams of a token when the database cannot say whether it still holds", async () => {
    const { lease, grant, stream } = await grantSeenElsewhere("ses_unanswered");
    // the grants are locked away: every question about them waits, as on a database that hangs
    await sql.query("BEGIN");
    await sql.query("LOCK TABLE brain_inspection_grants IN ACCESS EXCLUSIVE MODE");
    try {
      await ends(stream);
    } finally {
      await sql.query("COMMIT");
    }
    grant.release();
    lease.release();
  });
});
