import pg from "pg";
import { migrate } from "./migrations.js";
import { pgTypes } from "./store.js";

export interface PostgresConnection {
  url: string;
  poolSize: number;
  /** The variable the URL came from: errors name it, never the URL (it may hold a password). */
  urlEnv: string;
}

export class PostgresUnavailableError extends Error {
  constructor(urlEnv: string, cause: unknown) {
    // pg's messages name the host, port, user or database, never the password
    const code = (cause as { code?: string }).code;
    const message = cause instanceof Error ? cause.message : String(cause);
    super(`cannot use the PostgreSQL server in ${urlEnv}: ${code ? `${message} (${code})` : message}`);
    this.name = "PostgresUnavailableError";
  }
}

/** What stops Brain from using the PostgreSQL server at `url`, or undefined when it answers. */
export async function postgresProblem(url: string, urlEnv: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  // an error after the connection is made (the server going away) must not end the check
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return new PostgresUnavailableError(urlEnv, error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A pool on the database, its schema migrated to this Brain's; fails naming the variable. */
export async function openPostgresPool(connection: PostgresConnection): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: connection.url,
    max: connection.poolSize,
    types: pgTypes,
    connectionTimeoutMillis: 5000,
  });
  // an idle client whose server went away emits here: without a listener it would end Brain
  pool.on("error", () => undefined);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new PostgresUnavailableError(connection.urlEnv, error);
  }
  try {
    await migrate(client);
  } catch (error) {
    client.release();
    await pool.end().catch(() => undefined);
    throw error;
  }
  client.release();
  return pool;
}
