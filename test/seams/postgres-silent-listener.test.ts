import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { newId } from "../../src/ids.js";
import { PostgresEventBus } from "../../src/store/postgres/bus.js";
import {
  HEARTBEAT_EVERY_MS,
  HEARTBEAT_TIMEOUT_MS,
  PostgresNotifications,
} from "../../src/store/postgres/notifications.js";
import { openPostgresPool } from "../../src/store/postgres/open.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { createLogger } from "../../src/telemetry/logger.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const CONFIG = { model: "default", tools: [], max_steps: 4, metadata: {} };

// PostgreSQL's alone: the one connection an instance listens on, whose peer goes silent
describe("PostgreSQL notifications: a listening connection gone silent", needs("postgres"), () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let pool: pg.Pool;
  let store: PostgresStore;
  let notifications: PostgresNotifications;
  let bus: PostgresEventBus;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = await openPostgresPool({ url: database.url, poolSize: 4, urlEnv: "DATABASE_URL" });
    store = new PostgresStore(pool);
    // only the listening connection goes through the proxy: the reads of the catch-up do not
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    const logger = createLogger("silent");
    notifications = new PostgresNotifications(url.toString(), logger);
    bus = new PostgresEventBus(store, pool, notifications, newId("brn"), logger);
    await notifications.start();
  });

  afterAll(async () => {
    await bus?.close();
    await notifications?.close();
    await proxy?.close();
    await store?.close();
    await database?.drop();
  });

  it("is found dead by its heartbeat and made again, and what was appended meanwhile arrives", async () => {
    const id = newId("ses");
    await store.createSession(
      { id, tenant_id: "acme", config: CONFIG, created_at: "" },
      { type: "session.created", data: { config: CONFIG } },
    );
    const seen: SessionEvent[] = [];
    await bus.subscribe(id, (event) => seen.push(event));
    // appended by another instance: its notification reaches this one's connection
    await store.append(id, [{ type: "message.user", data: { content: "before" } }]);
    await expect.poll(() => seen.length).toBe(1);

    // the peer stops answering and closes nothing: the notification of this append is lost
    proxy.freeze();
    const frozenAt = Date.now();
    await store.append(id, [{ type: "message.user", data: { content: "while silent" } }]);
    await expect
      .poll(() => seen.map((event) => ("seq" in event ? event.seq : undefined)), {
        timeout: HEARTBEAT_EVERY_MS + HEARTBEAT_TIMEOUT_MS + 3000,
        interval: 100,
      })
      .toEqual([2, 3]);
    expect(Date.now() - frozenAt).toBeLessThan(HEARTBEAT_EVERY_MS + HEARTBEAT_TIMEOUT_MS + 2000);
  }, 30_000);
});
