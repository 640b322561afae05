import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";

/**
 * The PostgreSQL this machine runs (CI's too), as the user running the tests, whose database
 * `test` is there; BRAIN_TEST_POSTGRES names another.
 */
export const POSTGRES_ADMIN_URL =
  process.env.BRAIN_TEST_POSTGRES ??
  `postgres://${encodeURIComponent(userInfo().username)}@127.0.0.1:5432/test`;

export interface TestDatabase {
  url: string;
  drop: () => Promise<void>;
}

/** A database of its own for one test file, so runs side by side and reruns never meet; dropped after. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `brain_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
