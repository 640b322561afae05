import pg from "pg";
import { type InspectionGrants, LocalInspectionGrants } from "../api/inspection.js";
import type { StoreConfig } from "../config/load.js";
import type { EventBus } from "../events/bus.js";
import { LocalEventBus } from "../events/local-bus.js";
import { newId } from "../ids.js";
import type { Logger } from "../telemetry/logger.js";
import type { TurnLeases } from "../turns/leases.js";
import { LocalTurnLeases } from "../turns/local-leases.js";
import { PostgresEventBus } from "./postgres/bus.js";
import { PostgresInspectionGrants } from "./postgres/inspection.js";
import { PostgresTurnLeases } from "./postgres/leases.js";
import { PostgresNotifications } from "./postgres/notifications.js";
import { openPostgresPool } from "./postgres/open.js";
import { PostgresStore, pgTypes } from "./postgres/store.js";
import { SqliteStore } from "./sqlite.js";
import type { Store } from "./store.js";

/**
 * The parts that differ between one Brain process and many, opened together on one store: the
 * store, the event bus, turn leases and inspection grants. Embedded (SQLite, one process) or
 * PostgreSQL (any number of instances).
 */
export interface Backend {
  store: Store;
  bus: EventBus;
  leases: TurnLeases;
  inspection: InspectionGrants;
  /**
   * How often to look for turns whose owner is gone while Brain runs; undefined where only a
   * previous run of this very process can have left one (found at start).
   */
  takeoverEveryMs: number | undefined;
  /** What the start's log line says of where the data is: never a secret. */
  location: Record<string, unknown>;
  /** After every turn has ended: closes them all. */
  close(): Promise<void>;
}

export interface BackendOptions {
  logger: Logger;
  /** Opens the embedded store instead of SqliteStore (embedders, fault tests). */
  openStore?: (path: string) => Store;
}

export async function openBackend(config: StoreConfig, options: BackendOptions): Promise<Backend> {
  if (config.kind === "sqlite") {
    const store = options.openStore?.(config.path) ?? new SqliteStore(config.path);
    const bus = new LocalEventBus(store);
    return {
      store,
      bus,
      leases: new LocalTurnLeases(),
      inspection: new LocalInspectionGrants(),
      takeoverEveryMs: undefined,
      location: { store: "sqlite", path: config.path },
      close: async () => {
        await bus.close();
        await store.close();
      },
    };
  }
  const { logger } = options;
  const url = config.url.reveal();
  const pool = await openPostgresPool({ url, poolSize: config.poolSize, urlEnv: config.urlEnv });
  // leases on connections of their own: a pool busy with appends must never hold a renewal up past
  // the lease, which would hand a live turn to another instance
  const leasePool = new pg.Pool({
    connectionString: url,
    max: 2,
    types: pgTypes,
    connectionTimeoutMillis: 5000,
  });
  leasePool.on("error", () => undefined);
  const notifications = new PostgresNotifications(url, logger);
  const instanceId = newId("brn");
  // an append waits for PostgreSQL at most half a lease: the turn can still record its end
  const store = new PostgresStore(pool, { readMs: 1000, appendMs: (config.leaseSeconds * 1000) / 2 });
  const bus = new PostgresEventBus(store, pool, notifications, instanceId, logger);
  const leases = new PostgresTurnLeases(leasePool, notifications, instanceId, config.leaseSeconds, logger);
  const inspection = new PostgresInspectionGrants(pool, notifications, logger);
  try {
    await notifications.start();
  } catch (error) {
    await leasePool.end();
    await store.close();
    throw error;
  }
  return {
    store,
    bus,
    leases,
    inspection,
    // a dead owner's lease runs out within lease_seconds of its death: looked for every second after
    takeoverEveryMs: Math.min(1000, (config.leaseSeconds * 1000) / 3),
    location: { store: "postgres", url_env: config.urlEnv, instance: instanceId },
    close: async () => {
      await bus.close();
      await notifications.close();
      await leasePool.end();
      await store.close();
    },
  };
}
