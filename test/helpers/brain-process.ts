import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BrainClient } from "../../src/client/client.js";
import { TENANTS, type TenantName } from "./brain.js";
import { BRAIN_BIN } from "./cli.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "./processes.js";
import { removedOnFailure } from "./temp-dir.js";
import { testStore } from "./test-store.js";

export interface BrainProcess {
  url: string;
  keys: Record<TenantName, string>;
  client: (tenant?: TenantName) => BrainClient;
  /** Every line Brain wrote to stdout and stderr, across restarts. */
  output: () => string;
  /** The live process: a crash shows as an exit code or signal here. */
  process: () => StartedProcess["child"];
  /** kill -9: no shutdown, no last writes. */
  kill: () => Promise<void>;
  /** SIGTERM, keeping the files for a later start; resolves with the exit code. */
  terminate: () => Promise<number | null>;
  /** Start again on the same config and SQLite file. */
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

export function newKeys(): Record<TenantName, string> {
  return Object.fromEntries(
    TENANTS.map((tenant) => [tenant, `key-${tenant}-${randomBytes(12).toString("hex")}`]),
  ) as Record<TenantName, string>;
}

/**
 * The built `brain` command in its own process, as an operator runs it, on a fresh SQLite file,
 * with the tenants of the in-process test Brain (acme and globex) and the scripted model.
 * `overrides` replace top-level fields of the host config.
 */
export async function startBrainProcess(
  overrides: Record<string, unknown> = {},
  env: Record<string, string> = {},
  /** The tenants' keys, for instances that must share them (a cluster); new ones otherwise. */
  keys: Record<TenantName, string> = newKeys(),
): Promise<BrainProcess> {
  const dir = mkdtempSync(join(tmpdir(), "brain-process-"));
  const store = await testStore(dir, overrides);
  const config = {
    listen: "127.0.0.1:0",
    store: store.store,
    tenants: TENANTS.map((tenant) => ({ id: tenant, api_key_env: `KEY_${tenant.toUpperCase()}` })),
    models: [{ name: "default", provider: "scripted" }],
    tools: [],
    ...overrides,
  };
  const configPath = join(dir, "brain.json");
  writeFileSync(configPath, JSON.stringify(config));
  const fullEnv = { KEY_ACME: keys.acme, KEY_GLOBEX: keys.globex, ...store.env, ...env };
  const runs: (StartedProcess & { ready: string })[] = [];
  const current = () => runs.at(-1) as StartedProcess;
  const launch = async () => {
    const run = await startProcess([BRAIN_BIN, "-config", configPath], fullEnv, brainUrlFromLog);
    runs.push(run);
    brain.url = run.ready;
  };
  const brain: BrainProcess = {
    url: "",
    keys,
    client: (tenant = "acme") => new BrainClient(brain.url, keys[tenant]),
    output: () => runs.flatMap((run) => run.output).join("\n"),
    process: () => current().child,
    kill: async () => {
      await current().stop("SIGKILL");
    },
    terminate: () => current().stop("SIGTERM"),
    start: launch,
    stop: async () => {
      await current().stop("SIGTERM");
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await removedOnFailure(dir, launch());
  return brain;
}
