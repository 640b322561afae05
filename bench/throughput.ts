import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { availableParallelism } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, Pool } from "undici";
import type { ScriptedStep } from "../protocol/script.js";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, CALL_TEXT, echoStep, FLOOR_ENTRY, startBrainProcess } from "./brain-process.js";
import { type ArrivedEvent, watchEvents } from "./event-stream.js";
import { startEchoService } from "./processes.js";
import { type BenchContext, type Benchmark, versus } from "./section.js";
import { nowMs, summarize } from "./stats.js";

/** The scripted model's longest script; each session plays it from the start. */
const SCRIPT_STEPS = 10_000;
const MIB = 2 ** 20;

/** Echo calls in each turn of the throughput and PostgreSQL runs, unless --calls-per-turn says. */
export const CALLS_PER_TURN = 10;

/**
 * The scripted model's script for the throughput runs: a message starts a turn of `callsPerTurn`
 * echo calls of `text`, one a step, over and over.
 */
export function throughputScript(callsPerTurn: number, text = CALL_TEXT): ScriptedStep[] {
  const turn: ScriptedStep[] = [...Array(callsPerTurn).fill(echoStep(text)), { text: "done" }];
  return Array.from({ length: Math.floor(SCRIPT_STEPS / turn.length) }, () => turn).flat();
}

/** `chars` characters of prose, as an agent's system prompt or a page a tool read. */
function prose(chars: number): string {
  const sentence =
    "Answer the user's questions about their account carefully, and never reveal another's data. ";
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
}

export interface TurnsMeasured {
  calls: number;
  elapsed: number;
  perSecond: number;
  latency: ReturnType<typeof summarize>;
  errors: number;
  firstError: string | undefined;
}

/**
 * `count` sessions at once, spread over `brains` (each session keeps to the instance it was made
 * on, its SSE client too), each sending a message as soon as its last turn ended; counted after a
 * warm-up for `durationMs`. `during` runs while counting, and is given the elapsed seconds after.
 */
export async function measureTurns<T>(
  context: BenchContext,
  brains: readonly BenchBrain[],
  setup: {
    count: number;
    warmupMs: number;
    durationMs: number;
    /** Each session's system prompt. */
    system?: string;
    during?: () => () => T;
  },
): Promise<TurnsMeasured & { during: T | undefined }> {
  const agent = new Agent({ connections: null });
  const stop = new AbortController();
  // one signal ends every stream: a listener per stream is expected, not a leak
  setMaxListeners(0, stop.signal);
  try {
    context.log(`opening ${setup.count} sessions and their event streams on ${brains.length} Brain(s)`);
    const brainOf = (i: number) => brains[i % brains.length] as BenchBrain;
    const ids = await inBatches(setup.count, 50, (i) =>
      createSession(agent, brainOf(i), setup.system).then((session) => session.id),
    );
    const state = new Map(ids.map((id) => [id, { callAt: 0, ended: () => {} }]));
    let counting = false;
    const latencies: number[] = [];
    let calls = 0;
    let errors = 0;
    // what the first failure said, so that a run with errors tells which
    let firstError: string | undefined;
    const onEvent = (id: string) => (event: ArrivedEvent) => {
      const session = state.get(id);
      if (!session) return;
      if (event.type === "tool.call") session.callAt = event.at;
      else if (event.type === "tool.result") {
        const failed = !event.data.includes('"is_error":false');
        if (counting) {
          calls++;
          latencies.push(event.at - session.callAt);
          if (failed) {
            errors++;
            firstError ??= event.data.slice(0, 300);
          }
        }
      } else if (event.type === "turn.completed") session.ended();
      else if (event.type === "turn.failed" || event.type === "turn.interrupted") {
        if (counting) {
          errors++;
          firstError ??= event.data.slice(0, 300);
        }
        session.ended();
      }
    };
    const watchers = await inBatches(setup.count, 50, (i) =>
      watchEvents(agent, brainOf(i), ids[i] as string, onEvent(ids[i] as string), stop.signal),
    );
    context.log(
      `${setup.count} sessions for ${setup.durationMs / 1000} s after a ${setup.warmupMs} ms warm-up`,
    );
    let sending = true;
    let messageErrors = 0;
    const loops = ids.map(async (id, i) => {
      const session = state.get(id) as { callAt: number; ended: () => void };
      while (sending) {
        const ended = new Promise<void>((resolve) => {
          session.ended = resolve;
        });
        try {
          await sendMessage(agent, brainOf(i), id);
        } catch (error) {
          if (counting) {
            messageErrors++;
            firstError ??= (error as Error).message.slice(0, 300);
          }
          await sleep(10);
          continue;
        }
        await ended;
      }
    });
    await sleep(setup.warmupMs);
    counting = true;
    const started = nowMs();
    const finish = setup.during?.();
    await sleep(setup.durationMs);
    counting = false;
    const elapsed = (nowMs() - started) / 1000;
    const during = finish?.();
    sending = false;
    await Promise.all(loops);
    stop.abort();
    await Promise.allSettled(watchers.map((watcher) => watcher.closed));
    return {
      calls,
      elapsed,
      perSecond: calls / elapsed,
      latency: summarize(latencies),
      errors: errors + messageErrors,
      firstError,
      during,
    };
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
  }
}

/**
 * Throughput: `sessions` sessions at once, each sending a message as soon as its last turn ended,
 * every turn a run of echo calls; counted after a warm-up, for `duration` seconds. The reference is
 * the raw limit: as many undici POSTs in flight to the same echo service for the same time.
 */
export const run: Benchmark = async (context) => {
  const { sessions: count, durationSeconds, systemChars, payloadChars } = context.options;
  const callsPerTurn = context.options.callsPerTurn ?? CALLS_PER_TURN;
  const system = systemChars > 0 ? prose(systemChars) : undefined;
  const text = payloadChars > 0 ? prose(payloadChars) : CALL_TEXT;
  const warmupMs = Math.min(3000, durationSeconds * 200);
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const measure = async (name: string, entry?: string) => {
    const brain = await startBrainProcess(context, {
      name,
      echoUrl: echo.ready,
      toolsKey: token,
      script: throughputScript(callsPerTurn, text),
      ...(entry && { entry, root: context.root }),
    });
    try {
      const idleRss = brain.process.memory().rssBytes;
      const measured = await measureTurns(context, [brain], {
        count,
        warmupMs,
        durationMs: durationSeconds * 1000,
        ...(system !== undefined && { system }),
        during: () => {
          const before = cpuSnapshot(brain.process, echo);
          const started = nowMs();
          return () => cpuShares(before, cpuSnapshot(brain.process, echo), (nowMs() - started) / 1000);
        },
      });
      const peakRss = brain.process.memory().peakRssBytes;
      return { ...measured, cpu: measured.during as ReturnType<typeof cpuShares>, idleRss, peakRss };
    } finally {
      await brain.stop();
    }
  };
  try {
    const measured = await measure("throughput");
    const { cpu, idleRss, peakRss } = measured;
    context.log(`throughput: the floor, the same I/O with nothing else (bench/floor-server.ts)`);
    const floor = await measure("throughput-floor", FLOOR_ENTRY);
    context.log(`throughput: the raw limit, ${count} POSTs in flight for ${durationSeconds} s`);
    const raw = await rawThroughput(echo.ready, token, text, count, warmupMs, durationSeconds * 1000);
    return {
      id: "throughput",
      title: "Throughput (concurrent sessions, turns of echo calls, SQLite store)",
      params: {
        sessions: count,
        duration_s: durationSeconds,
        calls_per_turn: callsPerTurn,
        ...(systemChars > 0 && { system_chars: systemChars }),
        ...(payloadChars > 0 && { payload_chars: payloadChars }),
      },
      figures: [
        {
          name: "tool calls per second",
          value: measured.perSecond,
          unit: "calls/s",
          reference: { name: "raw POSTs", value: raw.perSecond },
          target: { text: "≥ 5000/s", met: measured.perSecond >= 5000 },
        },
        {
          name: "tool calls per second vs the floor",
          value: measured.perSecond,
          unit: "calls/s",
          reference: { name: "floor", value: floor.perSecond },
        },
        versus("tool call latency p50", measured.latency.p50, "raw POST", raw.latency.p50),
        versus("tool call latency p99", measured.latency.p99, "raw POST", raw.latency.p99),
        {
          name: "errors",
          value: measured.errors,
          unit: "",
          target: { text: "= 0", met: measured.errors === 0 },
        },
        {
          name: "Brain peak RSS",
          value: peakRss / MIB,
          unit: "MiB",
          reference: { name: "idle", value: idleRss / MIB },
        },
      ],
      notes: [
        `${measured.calls} tool calls counted in ${measured.elapsed.toFixed(1)} s; raw: ${raw.requests} POSTs.`,
        `CPU used while counting, in cores: Brain ${cpu.brain} (its main thread ${cpu.brainMainThread}), echo service ${cpu.echo}, load generator ${cpu.generator} (of ${availableParallelism()}).`,
        `the floor: ${floor.perSecond.toFixed(0)} calls/s (${(floor.perSecond / raw.perSecond).toFixed(2)}× the raw POSTs), ${floor.errors} errors, latency p50 ${floor.latency.p50.toFixed(1)} ms; in cores: the floor ${floor.cpu.brain} (main thread ${floor.cpu.brainMainThread}), echo service ${floor.cpu.echo}, load generator ${floor.cpu.generator}. It does only the I/O a call needs for Brain's guarantees (bench/floor-server.ts).`,
        "Latency: from the tool.call event to its tool.result event as an SSE client of the session sees them, so it includes Brain's queueing under load.",
        ...(measured.firstError ? [`first error: ${measured.firstError}`] : []),
      ],
    };
  } finally {
    await echo.stop();
  }
};

function cpuSnapshot(
  brain: { cpuSeconds: () => number; mainThreadCpuSeconds: () => number },
  echo: { cpuSeconds: () => number },
) {
  const own = process.cpuUsage();
  return {
    brain: brain.cpuSeconds(),
    brainMainThread: brain.mainThreadCpuSeconds(),
    echo: echo.cpuSeconds(),
    generator: (own.user + own.system) / 1e6,
  };
}

/** Cores each process kept busy between two snapshots. */
function cpuShares(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
  seconds: number,
) {
  const share = (key: keyof typeof before) => ((after[key] - before[key]) / seconds).toFixed(2);
  return {
    brain: share("brain"),
    brainMainThread: share("brainMainThread"),
    echo: share("echo"),
    generator: share("generator"),
  };
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
  text: string,
  concurrency: number,
  warmupMs: number,
  durationMs: number,
) {
  const pool = new Pool(echoUrl, { connections: null });
  const body = JSON.stringify({
    tenant_id: "bench",
    session_id: "ses_bench",
    call_id: "call_bench",
    arguments: { text },
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
