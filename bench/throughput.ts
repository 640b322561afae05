import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { availableParallelism } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, Pool } from "undici";
import type { ScriptedStep } from "../src/config/schema.js";
import { createSession, sendMessage } from "./api.js";
import { ECHO_STEP, startBrainProcess } from "./brain-process.js";
import { type ArrivedEvent, watchEvents } from "./event-stream.js";
import { startEchoService } from "./processes.js";
import { type Benchmark, versus } from "./section.js";
import { nowMs, summarize } from "./stats.js";

/** Tool steps per turn: a message starts a turn of this many echo calls, one per step. */
const CALLS_PER_TURN = 10;
/** The scripted model's longest script; each session plays it from the start. */
const SCRIPT_STEPS = 10_000;
const MIB = 2 ** 20;

/**
 * Throughput: `sessions` sessions at once, each sending a message as soon as its last turn ended,
 * every turn a run of echo calls; counted after a warm-up, for `duration` seconds. The reference is
 * the raw limit: as many undici POSTs in flight to the same echo service for the same time.
 */
export const run: Benchmark = async (context) => {
  const { sessions: count, durationSeconds } = context.options;
  const warmupMs = Math.min(3000, durationSeconds * 200);
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const turn: ScriptedStep[] = [...Array(CALLS_PER_TURN).fill(ECHO_STEP), { text: "done" }];
  const script = Array.from({ length: Math.floor(SCRIPT_STEPS / turn.length) }, () => turn).flat();
  const brain = await startBrainProcess(context, {
    name: "throughput",
    echoUrl: echo.ready,
    toolsKey: token,
    script,
  });
  const agent = new Agent({ connections: null });
  const stop = new AbortController();
  // one signal ends every stream: a listener per stream is expected, not a leak
  setMaxListeners(0, stop.signal);
  try {
    const idleRss = brain.process.memory().rssBytes;
    context.log(`throughput: opening ${count} sessions and their event streams`);
    const ids = await inBatches(count, 50, () => createSession(agent, brain).then((session) => session.id));
    const state = new Map(ids.map((id) => [id, { callAt: 0, ended: () => {} }]));
    let counting = false;
    const latencies: number[] = [];
    let calls = 0;
    let errors = 0;
    const onEvent = (id: string) => (event: ArrivedEvent) => {
      const session = state.get(id);
      if (!session) return;
      if (event.type === "tool.call") session.callAt = event.at;
      else if (event.type === "tool.result") {
        const failed = !event.data.includes('"is_error":false');
        if (counting) {
          calls++;
          latencies.push(event.at - session.callAt);
          if (failed) errors++;
        }
      } else if (event.type === "turn.completed") session.ended();
      else if (event.type === "turn.failed" || event.type === "turn.interrupted") {
        if (counting) errors++;
        session.ended();
      }
    };
    const watchers = await inBatches(count, 50, (i) =>
      watchEvents(agent, brain, ids[i] as string, onEvent(ids[i] as string), stop.signal),
    );

    context.log(`throughput: ${count} sessions for ${durationSeconds} s after a ${warmupMs} ms warm-up`);
    let sending = true;
    let messageErrors = 0;
    const loops = ids.map(async (id) => {
      const session = state.get(id) as { callAt: number; ended: () => void };
      while (sending) {
        const ended = new Promise<void>((resolve) => {
          session.ended = resolve;
        });
        try {
          await sendMessage(agent, brain, id);
        } catch {
          if (counting) messageErrors++;
          await sleep(10);
          continue;
        }
        await ended;
      }
    });
    await sleep(warmupMs);
    counting = true;
    const started = nowMs();
    const cpuBefore = cpuSnapshot(brain.process, echo);
    await sleep(durationSeconds * 1000);
    counting = false;
    const elapsed = (nowMs() - started) / 1000;
    const cpu = cpuShares(cpuBefore, cpuSnapshot(brain.process, echo), elapsed);
    sending = false;
    const peakRss = brain.process.memory().peakRssBytes;
    await Promise.all(loops);
    stop.abort();
    await Promise.allSettled(watchers.map((watcher) => watcher.closed));

    context.log(`throughput: the raw limit, ${count} POSTs in flight for ${durationSeconds} s`);
    const raw = await rawThroughput(echo.ready, token, count, warmupMs, durationSeconds * 1000);
    const brainLatency = summarize(latencies);
    const perSecond = calls / elapsed;
    return {
      id: "throughput",
      title: "Throughput (concurrent sessions, turns of echo calls, SQLite store)",
      params: { sessions: count, duration_s: durationSeconds, calls_per_turn: CALLS_PER_TURN },
      figures: [
        {
          name: "tool calls per second",
          value: perSecond,
          unit: "calls/s",
          reference: { name: "raw POSTs", value: raw.perSecond },
          target: { text: "≥ 5000/s", met: perSecond >= 5000 },
        },
        versus("tool call latency p50", brainLatency.p50, "raw POST", raw.latency.p50),
        versus("tool call latency p99", brainLatency.p99, "raw POST", raw.latency.p99),
        {
          name: "errors",
          value: errors + messageErrors,
          unit: "",
          target: { text: "= 0", met: errors + messageErrors === 0 },
        },
        {
          name: "Brain peak RSS",
          value: peakRss / MIB,
          unit: "MiB",
          reference: { name: "idle", value: idleRss / MIB },
        },
      ],
      notes: [
        `${calls} tool calls counted in ${elapsed.toFixed(1)} s; raw: ${raw.requests} POSTs.`,
        `CPU used while counting, in cores: Brain ${cpu.brain}, echo service ${cpu.echo}, load generator ${cpu.generator} (of ${availableParallelism()}).`,
        "Latency: from the tool.call event to its tool.result event as an SSE client of the session sees them, so it includes Brain's queueing under load.",
      ],
    };
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
    await Promise.allSettled([brain.stop(), echo.stop()]);
  }
};

function cpuSnapshot(brain: { cpuSeconds: () => number }, echo: { cpuSeconds: () => number }) {
  const own = process.cpuUsage();
  return { brain: brain.cpuSeconds(), echo: echo.cpuSeconds(), generator: (own.user + own.system) / 1e6 };
}

/** Cores each process kept busy between two snapshots. */
function cpuShares(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
  seconds: number,
) {
  const share = (key: keyof typeof before) => ((after[key] - before[key]) / seconds).toFixed(2);
  return { brain: share("brain"), echo: share("echo"), generator: share("generator") };
}

/** Run `make(i)` for i in 0..count-1, at most `width` at a time, keeping the order. */
async function inBatches<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += width) {
    const end = Math.min(count, start + width);
    out.push(...(await Promise.all(Array.from({ length: end - start }, (_, k) => make(start + k)))));
  }
  return out;
}

/** `concurrency` loops of back-to-back POSTs of Brain's request body, as many sockets as loops. */
async function rawThroughput(
  echoUrl: string,
  token: string,
  concurrency: number,
  warmupMs: number,
  durationMs: number,
) {
  const pool = new Pool(echoUrl, { connections: null });
  const body = JSON.stringify({
    tenant_id: "bench",
    session_id: "ses_bench",
    call_id: "call_bench",
    arguments: { text: "hello" },
  });
  const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
  let counting = false;
  let sending = true;
  let requests = 0;
  const latencies: number[] = [];
  const loops = Array.from({ length: concurrency }, async () => {
    while (sending) {
      const start = nowMs();
      const response = await pool.request({ path: "/tools/echo", method: "POST", headers, body });
      await response.body.json();
      if (counting) {
        requests++;
        latencies.push(nowMs() - start);
      }
    }
  });
  await sleep(warmupMs);
  counting = true;
  const started = nowMs();
  await sleep(durationMs);
  counting = false;
  const elapsed = (nowMs() - started) / 1000;
  sending = false;
  await Promise.all(loops);
  await pool.close();
  return { perSecond: requests / elapsed, requests, latency: summarize(latencies) };
}
