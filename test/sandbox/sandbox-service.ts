import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { ResultObject } from "../../protocol/result.js";
import { resolveSandboxConfig, type SandboxConfig } from "../../services/sandbox/config.js";
import { type RunningSandboxService, startSandboxService } from "../../services/sandbox/service.js";
import { captureLog } from "../helpers/captured-log.js";
import { onPath } from "../helpers/host-needs.js";
import { removedOnFailure } from "../helpers/temp-dir.js";
import { envelope, parseEventStream, postCall } from "../kit/kit-service.js";

export interface CallOptions {
  tenant?: string;
  session?: string;
  signal?: AbortSignal;
}

export interface ToolAnswer {
  result: ResultObject & { structured_content?: Record<string, unknown> };
  /** The progress payloads, in order. */
  progress: unknown[];
  /** The text of the result's first content item. */
  text: string;
}

export interface TestSandbox {
  url: string;
  token: string;
  stateDir: string;
  config: SandboxConfig;
  running: RunningSandboxService;
  /** Everything the service logged so far. */
  logs: () => string;
  call: (tool: string, args: Record<string, unknown>, options?: CallOptions) => Promise<ToolAnswer>;
  close: () => Promise<void>;
}

/**
 * The raw config of a test sandbox: small limits, its own state directory, and a uid range of its
 * own (`uidFirst`), so test files running at once never share a process budget.
 */
export function testConfig(stateDir: string, uidFirst: number, overrides: Record<string, unknown> = {}) {
  const { limits, ...rest } = overrides as { limits?: Record<string, unknown> };
  return {
    listen: "127.0.0.1:0",
    token_env: "SANDBOX_TEST_TOKEN",
    state_dir: stateDir,
    log_level: "debug",
    // the programs a shell would run, so a PATH without them leaves the tests without them too
    bwrap: onPath("bwrap") ?? "/nonexistent/bwrap-is-not-on-PATH",
    prlimit: onPath("prlimit") ?? "/nonexistent/prlimit-is-not-on-PATH",
    languages: { bash: "/usr/bin/bash", python: "/usr/bin/python3", node: "/usr/bin/node" },
    sandbox_uids: { first: uidFirst, count: 50 },
    limits: {
      timeout_seconds: 5,
      max_timeout_seconds: 20,
      job_timeout_seconds: 30,
      cpu_seconds: 10,
      memory_bytes: 268_435_456,
      max_processes: 32,
      tmp_bytes: 8_388_608,
      max_output_bytes: 65_536,
      ...limits,
    },
    ...rest,
  };
}

/** A real sandbox service on a free loopback port, with a random token and its logs captured. */
export async function startTestSandbox(
  uidFirst: number,
  overrides: Record<string, unknown> = {},
): Promise<TestSandbox> {
  // a state_dir given is another service's to remove
  const ownDir = overrides.state_dir === undefined;
  const stateDir = ownDir ? mkdtempSync(join(tmpdir(), "sandbox-test-")) : String(overrides.state_dir);
  const token = `sandbox-token-${randomBytes(12).toString("hex")}`;
  const resolved = resolveSandboxConfig(
    testConfig(stateDir, uidFirst, overrides),
    { SANDBOX_TEST_TOKEN: token },
    stateDir,
  );
  if (!resolved.ok) throw new Error(`test config invalid:\n${resolved.problems.join("\n")}`);
  const log = captureLog();
  const started = startSandboxService(resolved.config, {
    logger: pino({ level: "debug", base: { service: "sandbox" } }, log.destination),
  });
  const running = await (ownDir ? removedOnFailure(stateDir, started) : started);
  return {
    url: running.url,
    token,
    stateDir,
    config: resolved.config,
    running,
    logs: log.text,
    call: (tool, args, options = {}) => callTool(running.url, token, tool, args, options),
    close: async () => {
      await running.close();
      if (ownDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** One tool call as Brain sends it, read to its result whether JSON or an event stream. */
export async function callTool(
  url: string,
  token: string,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions = {},
): Promise<ToolAnswer> {
  const body = envelope(args, {
    tenant_id: options.tenant ?? "acme",
    session_id: options.session ?? "ses_one",
  });
  const response = await postCall(`${url}/tools/${tool}`, body, {
    token,
    ...(options.signal && { signal: options.signal }),
  });
  if (response.status !== 200) throw new Error(`${tool} answered ${response.status}: ${response.text}`);
  let result: ToolAnswer["result"];
  const progress: unknown[] = [];
  if (String(response.headers["content-type"]).startsWith("text/event-stream")) {
    const events = parseEventStream(response.text);
    const last = events.findLast((event) => "event" in event && event.event === "result");
    if (!last || !("data" in last)) throw new Error(`${tool}: the stream has no result:\n${response.text}`);
    for (const event of events) if ("event" in event && event.event === "progress") progress.push(event.data);
    result = last.data as ToolAnswer["result"];
  } else {
    result = response.json();
  }
  const first = result.content?.[0];
  return { result, progress, text: first && first.type === "text" ? first.text : "" };
}

/** The pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (cmdline.includes(marker) && state !== "Z") pids.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return pids;
}

/** The pids of live processes running as host user `uid`. */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      const real = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      if (real === uid && /^State:\s+[^Z]/m.test(status)) pids.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return pids;
}

/** Poll until `check` holds, or fail after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Digits unique to one test, to find its processes by: code never shows in a sandbox's command
 * lines, so tests put these in the arguments of what they start (`sleep 600.${tag}`,
 * `exec -a name-${tag} …`).
 */
export const marker = () => String(randomBytes(4).readUInt32BE() + 1_000_000_000);
