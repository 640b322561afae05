import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { Agent, Pool } from "undici";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, ECHO_STEP, startBrainProcess } from "./brain-process.js";
import { watchEvents } from "./event-stream.js";
import { type NodeProcess, startEchoService, startNode } from "./processes.js";
import type { Benchmark } from "./section.js";

/** Enough to bring the process to its working size (JIT, V8 heap spaces) before counting. */
const WARMUP_SESSIONS = 1000;
/** Both measured processes get the same hook: SIGUSR2 collects garbage (bench/gc-on-signal.ts). */
const GC_ON_SIGNAL = ["--expose-gc", "--import", "./dist/bench/gc-on-signal.js"];
const CONCURRENCY = 50;
const MIB = 2 ** 20;
const mib = (bytes: number) => (bytes / MIB).toFixed(1);
/** Time for the allocator to settle before RSS is read. */
const SETTLE_MS = 2000;

/**
 * Memory: the RSS each idle session costs, with `idleSessions` of them. A Brain session is idle
 * after one turn with one echo call; the reference is the peer holding the same sessions: the MCP
 * SDK server with one initialized session per client that made one echo call.
 */
export const run: Benchmark = async (context) => {
  const count = context.options.idleSessions;
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const brain = await startBrainProcess(context, {
    name: "memory",
    echoUrl: echo.ready,
    toolsKey: token,
    script: [ECHO_STEP, { text: "done" }],
    execArgv: GC_ON_SIGNAL,
  });
  const mcp = await startNode({
    root: context.root,
    args: ["dist/bench/mcp-echo-server.js"],
    execArgv: GC_ON_SIGNAL,
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  const agent = new Agent({ connections: CONCURRENCY * 2 });
  const mcpPool = new Pool(new URL(mcp.ready).origin, { connections: CONCURRENCY });
  try {
    const oneBrainSession = () => brainSessionWithTurn(agent, brain);
    const oneMcpSession = () => mcpSessionWithCall(mcpPool, new URL(mcp.ready).pathname);
    context.log(`memory: ${count} idle Brain sessions`);
    const ours = await perSession(brain.process, count, oneBrainSession);
    context.log(`memory: ${count} idle MCP SDK sessions`);
    const peer = await perSession(mcp, count, oneMcpSession);
    const disk = statSync(brain.dbPath).size + walSize(brain.dbPath);
    const curve = (points: typeof ours.curve) =>
      points.map((point) => `${point.sessions}: ${mib(point.rss)} MiB`).join(", ");
    return {
      id: "memory",
      title: "Memory (idle sessions, each after one turn with one tool call)",
      params: { sessions: count, warmup_sessions: WARMUP_SESSIONS },
      figures: [
        {
          name: "RSS per idle session",
          value: ours.rss,
          unit: "B",
          reference: { name: "MCP SDK server", value: peer.rss },
          target: { text: "< 2 KiB", met: ours.rss < 2048 },
        },
        {
          name: "JS heap per idle session",
          value: ours.heap,
          unit: "B",
          reference: { name: "MCP SDK server", value: peer.heap },
        },
        { name: "Brain RSS with all sessions", value: ours.last.rss / MIB, unit: "MiB" },
      ],
      notes: [
        `Brain RSS by sessions added after the warm-up: ${curve(ours.curve)}; the MCP server: ${curve(peer.curve)}.`,
        `A Brain session lives in SQLite, not in memory: ${Math.round(disk / (count + WARMUP_SESSIONS))} bytes of database per session on disk. Its RSS grows while SQLite's page cache (8 MiB, src/store/sqlite.ts) fills, and the 1,000 most recently used sessions keep their folded conversation; the JS heap does not grow with sessions.`,
        `RSS is read ${SETTLE_MS} ms after the last session; the JS heap after a full garbage collection (SIGUSR2 to bench/gc-on-signal.ts, in both processes).`,
      ],
    };
  } finally {
    await Promise.allSettled([agent.close(), mcpPool.close()]);
    await Promise.allSettled([brain.stop(), echo.stop(), mcp.stop()]);
  }
};

/**
 * RSS and JS heap per session over `count` sessions made `CONCURRENCY` at a time, after a warm-up
 * that lets the process reach its working size, so the figure is what one more session costs.
 * Memory is read at each quarter, RSS as an operator sees it, the heap after a full collection.
 */
async function perSession(process: NodeProcess<unknown>, count: number, make: () => Promise<void>) {
  const read = async () => {
    await sleep(SETTLE_MS);
    const rss = process.memory().rssBytes;
    const probe = process.nextLine((line) =>
      line.startsWith("gc-probe ") ? (JSON.parse(line.slice(9)) as NodeJS.MemoryUsage) : undefined,
    );
    process.child.kill("SIGUSR2");
    return { sessions: 0, rss, heap: (await probe).heapUsed };
  };
  await inParallel(WARMUP_SESSIONS, make);
  const curve = [await read()];
  for (let quarter = 1; quarter <= 4; quarter++) {
    const sessions = Math.round((count * quarter) / 4);
    await inParallel(sessions - Math.round((count * (quarter - 1)) / 4), make);
    curve.push({ ...(await read()), sessions });
  }
  const first = curve[0] as (typeof curve)[number];
  const last = curve.at(-1) as (typeof curve)[number];
  return {
    curve,
    rss: (last.rss - first.rss) / count,
    heap: (last.heap - first.heap) / count,
    last,
  };
}

async function inParallel(count: number, make: () => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        await make();
      }
    }),
  );
}

/** A session that ran one turn (one echo call, then text) to its end, then is left alone. */
async function brainSessionWithTurn(agent: Agent, brain: BenchBrain): Promise<void> {
  const { id } = await createSession(agent, brain);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  let ended = () => {};
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const watcher = await watchEvents(
    agent,
    brain,
    id,
    (event) => {
      if (event.type.startsWith("turn.") && event.type !== "turn.started") ended();
    },
    stop.signal,
  );
  await sendMessage(agent, brain, id);
  await done;
  stop.abort();
  await watcher.closed;
}

/** An MCP session as a client makes one: initialize, initialized, one echo call; then left alone. */
async function mcpSessionWithCall(pool: Pool, path: string): Promise<void> {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const post = async (message: object, session?: string) => {
    const response = await pool.request({
      path,
      method: "POST",
      headers: session
        ? { ...headers, "mcp-session-id": session, "mcp-protocol-version": LATEST_PROTOCOL_VERSION }
        : headers,
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
    });
    const text = await response.body.text();
    if (response.statusCode >= 400)
      throw new Error(`MCP answered ${response.statusCode}: ${text.slice(0, 200)}`);
    return response.headers["mcp-session-id"];
  };
  const session = await post({
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "brain-bench", version: "1.0.0" },
    },
  });
  if (typeof session !== "string") throw new Error("the MCP server gave no session id");
  await post({ method: "notifications/initialized" }, session);
  await post(
    { id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } },
    session,
  );
}

function walSize(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}
