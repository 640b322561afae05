import { connect, createServer, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresPool } from "../../src/store/postgres/open.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import type { IdempotencyClaim } from "../../src/store/store.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";

interface AnswerLosingProxy {
  port: number;
  /** The next statement whose text holds `marker` runs and commits; its answer never arrives. */
  loseAnswerTo: (marker: string) => void;
  /** Answers lost so far. */
  lost: () => number;
  close: () => Promise<void>;
}

/** Whether `answer`, the server's messages since a statement was sent, reaches ReadyForQuery. */
function readyForQuery(answer: Buffer): boolean {
  let at = 0;
  while (at + 5 <= answer.length) {
    if (answer[at] === 0x5a) return true;
    at += 1 + answer.readInt32BE(at + 1);
  }
  return false;
}

/**
 * A proxy in front of PostgreSQL that lets a statement through and cuts the connection when its
 * answer is complete: ReadyForQuery comes after the commit, so the statement committed for sure
 * and its client never hears of it, as when a network drops between the two.
 */
async function startAnswerLosingProxy(host: string, port: number): Promise<AnswerLosingProxy> {
  const sockets = new Set<Socket>();
  let marker: string | undefined;
  let lost = 0;
  const server = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    let answer: Buffer | undefined;
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.on("data", (chunk: Buffer) => {
      if (marker !== undefined && chunk.includes(marker)) {
        marker = undefined;
        answer = Buffer.alloc(0);
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (answer === undefined) {
        client.write(chunk);
        return;
      }
      answer = Buffer.concat([answer, chunk]);
      if (readyForQuery(answer)) {
        lost += 1;
        end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    loseAnswerTo: (text) => {
      marker = text;
    },
    lost: () => lost,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const claimOf = (key: string): IdempotencyClaim => {
  const now = Date.now();
  return {
    tenantId: "acme",
    key,
    fingerprint: "f1",
    now,
    expiredBefore: now - 86_400_000,
    abandonedBefore: now - 60_000,
  };
};

// PostgreSQL's alone: SQLite is in the process, and never loses an answer
describe("PostgreSQL idempotency keys: a claim whose answer was lost", needs("postgres"), () => {
  let database: TestDatabase;
  let proxy: AnswerLosingProxy;
  let store: PostgresStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startAnswerLosingProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    store = new PostgresStore(
      await openPostgresPool({ url: url.toString(), poolSize: 2, urlEnv: "DATABASE_URL" }),
    );
  });

  afterAll(async () => {
    await store?.close();
    await proxy?.close();
    await database?.drop();
  });

  it("is this request's own when retried, and still another's to every other request", async () => {
    proxy.loseAnswerTo("INSERT INTO brain_idempotency_keys");
    expect(await store.claimIdempotencyKey(claimOf("key-lost"))).toBeUndefined();
    expect(proxy.lost()).toBe(1);
    // the request runs: a retry of it meanwhile is refused, as before
    expect(await store.claimIdempotencyKey(claimOf("key-lost"))).toEqual({
      fingerprint: "f1",
      answer: undefined,
    });
  });

  it("upgrades a database whose keys were claimed before claims carried a token", async () => {
    const sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    try {
      // the schema as it was before: no claim column, a key claimed by a request still running
      await sql.query(`
        ALTER TABLE brain_idempotency_keys DROP COLUMN claim;
        UPDATE brain_schema SET version = 3;
        INSERT INTO brain_idempotency_keys (tenant_id, key, fingerprint, created_at)
          VALUES ('acme', 'key-old', 'f1', ${Date.now()});`);
      const upgraded = new PostgresStore(
        await openPostgresPool({ url: database.url, poolSize: 1, urlEnv: "DATABASE_URL" }),
      );
      try {
        expect(await upgraded.claimIdempotencyKey(claimOf("key-old"))).toEqual({
          fingerprint: "f1",
          answer: undefined,
        });
        expect(await upgraded.claimIdempotencyKey(claimOf("key-new"))).toBeUndefined();
      } finally {
        await upgraded.close();
      }
    } finally {
      await sql.end();
    }
  });
});
