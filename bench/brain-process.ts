import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedStep } from "../protocol/script.js";
import { makeTemporaryDir, type NodeProcess, removeTemporaryDir, startNode } from "./processes.js";
import type { BenchContext } from "./section.js";

export interface BenchBrain {
  url: string;
  /** The bench tenant's API key. */
  key: string;
  /** The SQLite file; its WAL sits beside it. */
  dbPath: string;
  process: NodeProcess<string>;
  stop: () => Promise<void>;
}

/** The binding of the example echo service, as the repository's examples/brain.json declares it. */
function echoBinding(root: string, echoUrl: string) {
  const example = JSON.parse(readFileSync(join(root, "examples/brain.json"), "utf8"));
  return {
    ...example.tools[0],
    url: `${echoUrl}/tools/echo`,
    token_env: "BRAIN_TOOLS_KEY",
    tenants: ["bench"],
  };
}

/**
 * The floor under Brain's CPU per call, run by the harness as a Brain: the I/O a call needs for
 * Brain's guarantees and nothing else (bench/floor-server.ts).
 */
export const FLOOR_ENTRY = "dist/bench/floor-server.js";

/** What the benchmarks' echo calls send, unless told to send more. */
export const CALL_TEXT = "hello";

/** A step of the scripted model that makes one echo call of `text`. */
export const echoStep = (text: string): ScriptedStep => ({
  tool_calls: [{ name: "echo", arguments: { text } }],
});
export const ECHO_STEP = echoStep(CALL_TEXT);

/**
 * Brain as an operator runs it: the built `brain` command in its own process, on a fresh SQLite
 * file, with the scripted model playing `script` and the echo binding. With --cpu-prof the process
 * writes a V8 profile named after `name` when it stops.
 */
export async function startBrainProcess(
  context: BenchContext,
  setup: {
    name: string;
    echoUrl: string;
    toolsKey: string;
    script: ScriptedStep[];
    execArgv?: string[];
    /** A PostgreSQL database instead of a SQLite file of its own; instances on one share it. */
    postgres?: { url: string; leaseSeconds?: number };
    /** The bench tenant's key, for instances that must share it; a new one otherwise. */
    key?: string;
    /** More environment: the OpenTelemetry variables, say. */
    env?: Record<string, string>;
    /** Run the Brain built here rather than the one --brain or the working tree names. */
    root?: string | undefined;
    /** The script to run instead of the `brain` command: the floor server (bench/floor-server.ts). */
    entry?: string;
    /** What runs Node, and how long it may take to be ready: valgrind, for the instruction counts. */
    launcher?: readonly string[];
    readyTimeoutMs?: number;
  },
): Promise<BenchBrain> {
  const dir = makeTemporaryDir("brain-bench-");
  const key = setup.key ?? randomBytes(24).toString("base64url");
  const dbPath = join(dir, "brain.db");
  const store = setup.postgres
    ? { kind: "postgres", url_env: "DATABASE_URL", lease_seconds: setup.postgres.leaseSeconds ?? 10 }
    : { kind: "sqlite", path: dbPath };
  const config = {
    listen: "127.0.0.1:0",
    store,
    tenants: [{ id: "bench", api_key_env: "BENCH_API_KEY" }],
    models: [{ name: "default", provider: "scripted", script: setup.script }],
    tools: [echoBinding(context.root, setup.echoUrl)],
    limits: { max_steps_per_turn: 1000 },
  };
  const configPath = join(dir, "brain.json");
  writeFileSync(configPath, JSON.stringify(config));
  const profDir = context.options.cpuProfDir;
  // a Brain that fails to start leaves no directory behind
  const brain = await startNode({
    root: setup.root ?? context.options.brainRoot ?? context.root,
    args: [setup.entry ?? "dist/src/cli/main.js", "-config", configPath],
    env: {
      BENCH_API_KEY: key,
      BRAIN_TOOLS_KEY: setup.toolsKey,
      ...(setup.postgres && { DATABASE_URL: setup.postgres.url }),
      ...(context.options.brainNodeOptions && { NODE_OPTIONS: context.options.brainNodeOptions }),
      ...setup.env,
    },
    execArgv: [
      ...(setup.execArgv ?? []),
      ...(profDir
        ? ["--cpu-prof", "--cpu-prof-dir", profDir, "--cpu-prof-name", `brain-${setup.name}.cpuprofile`]
        : []),
    ],
    ready: brainUrl,
    ...(setup.launcher && { launcher: setup.launcher }),
    ...(setup.readyTimeoutMs !== undefined && { timeoutMs: setup.readyTimeoutMs }),
  }).catch((error: unknown) => {
    removeTemporaryDir(dir);
    throw error;
  });
  return {
    url: brain.ready,
    key,
    dbPath,
    process: brain,
    stop: async () => {
      await brain.stop();
      removeTemporaryDir(dir);
    },
  };
}

/** Brain's `brain listening` log line carries its URL. */
function brainUrl(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { msg?: string; url?: string };
    return entry.msg === "brain listening" ? entry.url : undefined;
  } catch {
    return undefined;
  }
}
