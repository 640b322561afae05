import type { PoolClient } from "pg";

/**
 * The schema, one step per version, each applied once and in order. Every table is named brain_*,
 * so Brain can share a database. Events keep their data as the JSON text Brain wrote: it is never
 * queried inside, and text is what both ends have.
 */
// the check schema 2 added to brain_append
const LAST_SEQ_CHECK = `
    IF p_last IS NOT NULL AND s_last <> p_last THEN
      RETURN QUERY SELECT false, s_status, 0::bigint, 'moved'::text;
      RETURN;
    END IF;
`;

/** The first key of the per-tenant lock of turn starts; the second is the tenant id's hash. */
const TENANT_TURNS_LOCK = 726_451;

// the check schema 3 added: a tenant's turn starts one at a time (a lock per tenant, held to the
// commit), each counting the running sessions it sees committed, so two cannot both take the last
// place under max_concurrent_turns
const TENANT_LIMIT_CHECK = `
    IF p_turn_limit IS NOT NULL THEN
      PERFORM pg_advisory_xact_lock(${TENANT_TURNS_LOCK}, hashtext(s_tenant));
      IF (SELECT count(*) FROM brain_sessions c WHERE c.tenant_id = s_tenant AND c.status = 'running') >= p_turn_limit THEN
        RETURN QUERY SELECT false, s_status, 0::bigint, 'tenant_full'::text;
        RETURN;
      END IF;
    END IF;
`;

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE brain_sessions (
    id text PRIMARY KEY,
    tenant_id text NOT NULL,
    status text NOT NULL,
    config text NOT NULL,
    created_at text NOT NULL,
    last_seq bigint NOT NULL
  );
  CREATE INDEX brain_sessions_by_tenant ON brain_sessions (tenant_id, id);
  CREATE INDEX brain_sessions_running ON brain_sessions (status) WHERE status = 'running';

  CREATE TABLE brain_events (
    session_id text NOT NULL,
    seq bigint NOT NULL,
    type text NOT NULL,
    at text NOT NULL,
    data text NOT NULL,
    -- on the first event of each append: an append retried after a lost connection is found, not made twice
    append_id text,
    PRIMARY KEY (session_id, seq)
  );
  CREATE UNIQUE INDEX brain_events_appends ON brain_events (session_id, append_id) WHERE append_id IS NOT NULL;

  -- One turn owner per session. token grows with every new owner: an append names the token of
  -- the lease it was made under (fencing), so an owner that lost its lease cannot write again.
  CREATE TABLE brain_turn_leases (
    session_id text PRIMARY KEY,
    owner text NOT NULL,
    token bigint NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE SEQUENCE brain_lease_tokens;

  -- Inspection grants by digest of the token: a tool service's callback may reach any instance.
  -- A grant holds only while the lease of the turn that made it does, so a dead owner's die with it.
  CREATE TABLE brain_inspection_grants (
    digest text PRIMARY KEY,
    tenant_id text NOT NULL,
    session_id text NOT NULL,
    lease_token bigint NOT NULL
  );

  -- Live-only events too large for a notification's payload, read once by every instance.
  CREATE UNLOGGED TABLE brain_live_events (
    id bigserial PRIMARY KEY,
    payload text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );

  ${appendFunction(1)}
  `,
  // 2: an append may name the session's last seq it expects (a decision made on what the log held);
  // idempotency keys of the API's POSTs, kept a day
  `
  DROP FUNCTION brain_append(text, text[], text[], text, text[], text, bigint, text);
  ${appendFunction(2)}
  CREATE TABLE brain_idempotency_keys (
    tenant_id text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    status int,
    body text,
    created_at bigint NOT NULL,
    PRIMARY KEY (tenant_id, key)
  );
  CREATE INDEX brain_idempotency_keys_by_age ON brain_idempotency_keys (created_at);
  `,
  // 3: a turn's start may name its tenant's max_concurrent_turns, checked in the append
  `
  DROP FUNCTION brain_append(text, text[], text[], text, text[], text, bigint, text, bigint);
  ${appendFunction(3)}
  `,
  // 4: an idempotency key's claim carries a token of its own, so that a claim retried after its
  // answer was lost is known as the same claim; keys claimed before have none, and stay others'
  `
  ALTER TABLE brain_idempotency_keys ADD COLUMN claim text;
  `,
];

/**
 * brain_append as each migration made it: one round trip locks the session row, checks the
 * lease, the status (from schema 2 the last seq, from schema 3 the tenant's running turns),
 * numbers the events after last_seq, sets the status and tells the instances what was appended.
 */
function appendFunction(schema: 1 | 2 | 3): string {
  const checksLast = schema >= 2;
  const checksTenant = schema >= 3;
  return `
  -- An append in one round trip: the session row is locked, the status checked, the events
  -- numbered after last_seq, the status set, and the instances told what was appended.
  CREATE FUNCTION brain_append(
    p_session text, p_types text[], p_data text[], p_at text,
    p_expect text[], p_set text, p_lease bigint, p_append text${checksLast ? ", p_last bigint" : ""}${checksTenant ? ", p_turn_limit int" : ""}
  ) RETURNS TABLE (ok boolean, status text, first_seq bigint, refusal text)
  LANGUAGE plpgsql AS $$
  DECLARE
    s_status text;
    s_last bigint;${checksTenant ? "\n    s_tenant text;" : ""}
    s_done bigint;
    n int := cardinality(p_types);
  BEGIN
    SELECT s.status, s.last_seq${checksTenant ? ", s.tenant_id" : ""} INTO s_status, s_last${checksTenant ? ", s_tenant" : ""}
      FROM brain_sessions s WHERE s.id = p_session FOR UPDATE;
    IF NOT FOUND THEN
      RETURN QUERY SELECT false, NULL::text, 0::bigint, 'not_found'::text;
      RETURN;
    END IF;
    -- a retry of an append that committed before its answer was lost: the same answer again
    SELECT e.seq INTO s_done FROM brain_events e WHERE e.session_id = p_session AND e.append_id = p_append;
    IF FOUND THEN
      RETURN QUERY SELECT true, s_status, s_done, NULL::text;
      RETURN;
    END IF;
    IF p_lease IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM brain_turn_leases l
      WHERE l.session_id = p_session AND l.token = p_lease AND l.expires_at > clock_timestamp()
    ) THEN
      RETURN QUERY SELECT false, s_status, 0::bigint, 'lease_lost'::text;
      RETURN;
    END IF;
    IF p_expect IS NOT NULL AND NOT (s_status = ANY (p_expect)) THEN
      RETURN QUERY SELECT false, s_status, 0::bigint, 'status'::text;
      RETURN;
    END IF;
${checksLast ? LAST_SEQ_CHECK : ""}${checksTenant ? TENANT_LIMIT_CHECK : ""}    INSERT INTO brain_events (session_id, seq, type, at, data, append_id)
      SELECT p_session, s_last + i, p_types[i], p_at, p_data[i], CASE WHEN i = 1 THEN p_append END
      FROM generate_subscripts(p_types, 1) AS i;
    UPDATE brain_sessions SET last_seq = s_last + n, status = COALESCE(p_set, s_status) WHERE id = p_session;
    PERFORM pg_notify('brain_events', p_session || ' ' || (s_last + n));
    RETURN QUERY SELECT true, COALESCE(p_set, s_status), s_last + 1, NULL::text;
  END $$;
`;
}

/** An arbitrary fixed key: instances that start at once migrate one after the other. */
const MIGRATION_LOCK = 7_264_513_001;

/** Bring the database's schema up to this Brain's, in one transaction per start. */
export async function migrate(client: PoolClient): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query("CREATE TABLE IF NOT EXISTS brain_schema (version int NOT NULL)");
    const found = await client.query<{ version: number }>("SELECT version FROM brain_schema");
    const version = found.rows[0]?.version ?? 0;
    if (version > MIGRATIONS.length) {
      throw new Error(
        `the database was migrated by a newer Brain (schema ${version}); this one knows schema ${MIGRATIONS.length}`,
      );
    }
    for (const step of MIGRATIONS.slice(version)) await client.query(step);
    if (found.rows.length === 0)
      await client.query("INSERT INTO brain_schema VALUES ($1)", [MIGRATIONS.length]);
    else await client.query("UPDATE brain_schema SET version = $1", [MIGRATIONS.length]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

export const SCHEMA_VERSION = MIGRATIONS.length;
