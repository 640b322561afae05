import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { Pool } from "undici";
import { type Language, resolveSandboxConfig } from "../services/sandbox/config.js";
import { BLOCK_FD, INFO_FD, launchCommand, SECCOMP_FD } from "../services/sandbox/launch-command.js";
import { layoutOf } from "../services/sandbox/sandbox.js";
import { seccompFilter } from "../services/sandbox/seccomp.js";
import { workspaceName } from "../services/sandbox/workspaces.js";
import { runWhenMain } from "./alone.js";
import { makeTemporaryDir, removeTemporaryDir, startNode } from "./processes.js";
import { type Benchmark, versus } from "./section.js";
import { nowMs, summarize } from "./stats.js";

const RUNS = 100;
const WARMUP = 10;
const TARGET_TRUE_MS = 30;
/** A Python program that works for about 10 ms. */
const PYTHON_10MS =
  "import time\nend = time.perf_counter() + 0.01\nwhile time.perf_counter() < end:\n    pass";
const OWNER = { tenantId: "bench", sessionId: "ses_bench" };

/**
 * sandbox_exec end to end through the service (HTTP call, workspace, sandbox, interpreter,
 * result) — a session's later calls, which find a sandbox made ready, and its first, which makes
 * one — against the raw limit: the same prlimit + bwrap command line spawned directly, and below
 * that the bare program with no sandbox at all.
 */
export const run: Benchmark = async (context) => {
  if (process.getuid?.() !== 0)
    throw new Error("the sandbox benchmark runs as root, as the sandbox service does");
  const stateDir = makeTemporaryDir("bench-sandbox-");
  chmodSync(stateDir, 0o711);
  const token = randomBytes(24).toString("base64url");
  const raw = {
    listen: "127.0.0.1:0",
    token_env: "SANDBOX_BENCH_TOKEN",
    state_dir: join(stateDir, "state"),
    log_level: "warn",
    languages: { bash: "/usr/bin/bash", python: "/usr/bin/python3" },
    sandbox_uids: { first: 190_000, count: 1000 },
    memory_cgroup: process.env.BENCH_MEMORY_CGROUP ?? "auto",
    limits: { workspace_idle_seconds: 600 },
  };
  const resolved = resolveSandboxConfig(raw, { SANDBOX_BENCH_TOKEN: token }, stateDir);
  if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
  const { config } = resolved;
  const layout = layoutOf(config);
  if (!layout.ok) throw new Error(layout.problems.join("\n"));
  const configPath = join(stateDir, "sandbox.json");
  writeFileSync(configPath, JSON.stringify({ ...raw, log_level: "info" }));
  // the service in its own process, as it runs: its size is part of what each spawn costs
  const service = await startNode({
    root: context.root,
    args: ["dist/services/sandbox/main.js", "--config", configPath],
    env: { SANDBOX_BENCH_TOKEN: token },
    ready: (line) =>
      line.includes("tool service listening") ? (JSON.parse(line) as { url: string }).url : undefined,
  });
  const pool = new Pool(service.ready, { connections: 1 });
  try {
    const exec = async (language: Language, code: string, sessionId = OWNER.sessionId) => {
      const response = await pool.request({
        path: "/tools/sandbox_exec",
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({
          tenant_id: OWNER.tenantId,
          session_id: sessionId,
          call_id: "call_bench",
          arguments: { language, code },
        }),
      });
      const text = await response.body.text();
      if (response.statusCode !== 200 || !text.includes('"exit_code":0')) {
        throw new Error(`sandbox_exec failed: ${response.statusCode} ${text.slice(0, 300)}`);
      }
    };
    // the raw runs use the service's own workspace directory and user, created by this call
    await exec("bash", "true");
    const workspaceDir = join(config.stateDir, "workspaces", workspaceName(OWNER));
    const uid = 190_000;
    const filter = seccompFilter();
    const rawRun = (language: Language, code: string) => {
      const codeDir = mkdtempSync(join(stateDir, "code-"));
      chmodSync(codeDir, 0o755);
      writeFileSync(join(codeDir, "main"), code, { mode: 0o644 });
      const command = launchCommand(config, layout.layout, config.limits, {
        workspaceDir,
        codeDir,
        language,
        seccomp: filter !== undefined,
      });
      return () => spawnToEnd(command, uid, { sandboxed: true, ...(filter && { filter }) });
    };

    context.log(`sandbox: ${RUNS} runs of each, after ${WARMUP} to warm up`);
    const measure = async (name: string, once: (i: number) => Promise<void>) => {
      for (let i = 0; i < WARMUP; i++) await once(-1 - i);
      const samples: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const start = nowMs();
        await once(i);
        samples.push(nowMs() - start);
      }
      context.log(`sandbox: ${name} done`);
      return summarize(samples);
    };
    const trueCall = await measure("exec true", () => exec("bash", "true"));
    const trueFirst = await measure("exec true, first call", (i) => exec("bash", "true", `ses_first_${i}`));
    const trueRaw = await measure("raw true", rawRun("bash", "true"));
    const bareTrue = await measure("bare true", () =>
      spawnToEnd({ file: "/usr/bin/bash", args: ["-c", "true"] }, uid, { sandboxed: false }),
    );
    const pyCall = await measure("exec python", () => exec("python", PYTHON_10MS));
    const pyRaw = await measure("raw python", rawRun("python", PYTHON_10MS));
    const barePy = await measure("bare python", () =>
      spawnToEnd({ file: "/usr/bin/python3", args: ["-c", PYTHON_10MS] }, uid, { sandboxed: false }),
    );
    const serviceRss = service.memory().rssBytes;

    return {
      id: "sandbox",
      title: "Sandbox service: sandbox_exec end to end (sequential)",
      params: {
        runs: RUNS,
        warmup: WARMUP,
        languages: ["bash", "python"],
        mounts: layout.layout.mounts.length,
        service_rss_mib: Math.round(serviceRss / 1024 / 1024),
      },
      figures: [
        {
          ...versus(
            "sandbox_exec `true` p50 vs raw prlimit+bwrap",
            trueCall.p50,
            "prlimit+bwrap spawn",
            trueRaw.p50,
          ),
          target: { text: `< ${TARGET_TRUE_MS} ms`, met: trueCall.p50 < TARGET_TRUE_MS },
        },
        versus(
          "sandbox_exec `true` p99 vs raw prlimit+bwrap",
          trueCall.p99,
          "prlimit+bwrap spawn",
          trueRaw.p99,
        ),
        versus(
          "a session's first sandbox_exec `true` p50 vs raw",
          trueFirst.p50,
          "prlimit+bwrap spawn",
          trueRaw.p50,
        ),
        versus("raw prlimit+bwrap `true` p50 vs no sandbox", trueRaw.p50, "bash -c true", bareTrue.p50),
        versus("sandbox_exec python 10 ms p50 vs raw", pyCall.p50, "prlimit+bwrap spawn", pyRaw.p50),
        versus("raw prlimit+bwrap python 10 ms p50 vs no sandbox", pyRaw.p50, "python3 -c", barePy.p50),
      ],
      notes: [
        "sandbox_exec: an undici POST of the envelope Brain sends to the service in its own process, answered as an event stream. A session's later calls find a sandbox made ready after its previous call (warm_sandboxes): namespaces and mounts in place, only the program to start. A session's first call (a new session each time) also creates the workspace and spawns its sandbox.",
        "raw: the identical command line (limits, namespaces, read-only mounts, workspace and code binds) spawned from the small benchmark process and started at once: what a sandbox made per call costs at least.",
        "no sandbox: the interpreter alone, as the same user; the gap to raw is what prlimit and bubblewrap's namespaces and mounts cost.",
        "Node forks to spawn (libuv), and a fork costs in proportion to the parent's resident memory: that is most of the gap between a first call and raw.",
        `The python program spins for 10 ms of wall time. ${layout.layout.mounts.length} read-only mounts: the program directory (interpreters and programs, linked), the library directories, the run's code.`,
      ],
    };
  } finally {
    await pool.close();
    await service.stop();
    removeTemporaryDir(stateDir);
  }
};

/**
 * Spawn a command as `uid` and wait for its exit; a non-zero exit fails the benchmark. A sandbox
 * command waits on its block fd, which is released at once.
 */
function spawnToEnd(
  command: { file: string; args: string[] },
  uid: number,
  { sandboxed, filter }: { sandboxed: boolean; filter?: Buffer },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const pipes = sandboxed ? (filter ? 3 : 2) : 0;
    const child = spawn(command.file, command.args, {
      uid,
      gid: uid,
      env: {},
      stdio: ["ignore", "ignore", "ignore", ...new Array<"pipe">(pipes).fill("pipe")],
    });
    if (sandboxed) {
      const stdio = child.stdio as readonly unknown[];
      const block = stdio[BLOCK_FD] as Writable;
      block.on("error", () => {}); // bwrap closes it once read
      block.end("x");
      (stdio[INFO_FD] as Readable).resume();
      if (filter) (stdio[SECCOMP_FD] as Writable).end(filter);
    }
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command.file} exited ${code}`)),
    );
  });
}

await runWhenMain(import.meta.url, run);
