import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase } from "./postgres.js";

/**
 * The store a test Brain runs on: its own SQLite file in `dir`, or, when the run sets
 * BRAIN_TEST_STORE=postgres (vitest.config.ts's "postgres" project), a database of its own on the
 * tests' PostgreSQL, dropped by `drop`. Leases are short there, so that a killed Brain's turns are
 * taken over within a test's patience.
 */
export async function testStore(
  dir: string,
  /** A test's own config fields: one that names its store keeps it. */
  overrides: Record<string, unknown>,
): Promise<TestStore> {
  if (process.env.BRAIN_TEST_STORE !== "postgres" || "store" in overrides) {
    const path = join(dir, "brain.db");
    return {
      store: { kind: "sqlite", path },
      env: {},
      everything: async () => [path, `${path}-wal`].map(readIfThere).join("\n"),
      drop: async () => {},
    };
  }
  const database = await createTestDatabase();
  return {
    store: { kind: "postgres", url_env: "BRAIN_TEST_DATABASE_URL", lease_seconds: 2 },
    env: { BRAIN_TEST_DATABASE_URL: database.url },
    everything: () => everyRow(database.url),
    drop: database.drop,
  };
}

export interface TestStore {
  /** The host config's store entry, and the environment it names. */
  store: Record<string, unknown>;
  env: Record<string, string>;
  /** Everything the store holds, as text, for tests that look for what must never be there. */
  everything: () => Promise<string>;
  drop: () => Promise<void>;
}

function readIfThere(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return "";
  }
}

/** Every row of every table of Brain's in the database, as text. */
async function everyRow(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'brain_%'",
    );
    const rows: string[] = [];
    // one query at a time: a client runs one
    for (const table of tables.rows) {
      const result = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${table.name} t`);
      rows.push(...result.rows.map((row) => row.row));
    }
    return rows.join("\n");
  } finally {
    await client.end();
  }
}
