import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningBrain, type StartOptions, startBrain as start } from "../../src/brain.js";
import { BrainClient } from "../../src/client/client.js";
import { resolveConfig } from "../../src/config/load.js";
import { captureLog } from "./captured-log.js";
import { removedOnFailure } from "./temp-dir.js";
import { testStore } from "./test-store.js";

export const TENANTS = ["acme", "globex"] as const;
export type TenantName = (typeof TENANTS)[number];

export interface TestBrain {
  url: string;
  /** The raw host config this Brain runs with. */
  raw: Record<string, unknown>;
  env: Record<string, string>;
  keys: Record<TenantName, string>;
  dbPath: string;
  /** Everything the store holds, as text: the SQLite file and its WAL, or every row of PostgreSQL. */
  stored: () => Promise<string>;
  client: (tenant?: TenantName) => BrainClient;
  /** Everything Brain logged so far. */
  logs: () => string;
  running: RunningBrain;
  /** Stop, then start again on the same SQLite file. */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * A real Brain on an ephemeral loopback port with its own SQLite file, two tenants (acme and
 * globex) with random keys, and the scripted model as "default". `overrides` replace top-level
 * fields of the host config; `env` adds environment variables (tool tokens).
 */
export async function startBrain(
  overrides: Record<string, unknown> = {},
  options: { env?: Record<string, string>; start?: StartOptions } = {},
): Promise<TestBrain> {
  const dir = mkdtempSync(join(tmpdir(), "brain-test-"));
  const dbPath = join(dir, "brain.db");
  const keys = {
    acme: `key-acme-${randomBytes(12).toString("hex")}`,
    globex: `key-globex-${randomBytes(12).toString("hex")}`,
  };
  const store = await testStore(dir, overrides);
  const env: Record<string, string> = {
    KEY_ACME: keys.acme,
    KEY_GLOBEX: keys.globex,
    ...store.env,
    ...options.env,
  };
  const raw: Record<string, unknown> = {
    listen: "127.0.0.1:0",
    store: store.store,
    log_level: "debug",
    tenants: [
      { id: "acme", api_key_env: "KEY_ACME" },
      { id: "globex", api_key_env: "KEY_GLOBEX" },
    ],
    models: [{ name: "default", provider: "scripted" }],
    tools: [],
    ...overrides,
  };
  const loaded = resolveConfig(raw, { env, baseDir: dir });
  if (!loaded.ok) throw new Error(`test config invalid:\n${loaded.problems.join("\n")}`);
  const log = captureLog();
  const boot = () =>
    start(loaded.config, { logDestination: log.destination, sseKeepAliveMs: 60_000, ...options.start });
  const brain: TestBrain = {
    url: "",
    raw,
    env,
    keys,
    dbPath,
    stored: store.everything,
    running: await removedOnFailure(dir, boot()),
    client: (tenant = "acme") => new BrainClient(brain.url, keys[tenant]),
    logs: log.text,
    restart: async () => {
      await brain.running.close();
      brain.running = await boot();
      brain.url = brain.running.url;
    },
    stop: async () => {
      await brain.running.close();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  brain.url = brain.running.url;
  return brain;
}
