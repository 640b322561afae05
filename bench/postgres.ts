import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { userInfo } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { Agent } from "undici";
import { callApi, sendMessage } from "./api.js";
import { type BenchBrain, startBrainProcess } from "./brain-process.js";
import { type ArrivedEvent, watchEvents } from "./event-stream.js";
import { startEchoService } from "./processes.js";
import type { Benchmark, Figure } from "./section.js";
import { nowMs, summarize } from "./stats.js";
import { CALLS_PER_TURN, measureTurns, type TurnsMeasured, throughputScript } from "./throughput.js";

/** The PostgreSQL to measure on (BRAIN_BENCH_POSTGRES); the run makes a database of its own there and drops it. */
const ADMIN_URL =
  process.env.BRAIN_BENCH_POSTGRES ??
  `postgres://${encodeURIComponent(userInfo().username)}@127.0.0.1:5432/test`;
const DELIVERY_SESSIONS = 50;
const DELIVERY_TURNS = 20;
const TAKEOVER_LEASE_SECONDS = 10;

/**
 * Brain on PostgreSQL: throughput with one instance and with two on one database, next to SQLite in
 * the same run; how long an event takes to reach an SSE client on another instance than the one
 * that appended it, next to a client on the same one; and how long a turn of a killed instance
 * takes to be taken over.
 */
export const run: Benchmark = async (context) => {
  const database = await createDatabase();
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const started: BenchBrain[] = [];
  const brain = async (name: string, postgres: boolean, key?: string, leaseSeconds?: number) => {
    const instance = await startBrainProcess(context, {
      name,
      echoUrl: echo.ready,
      toolsKey: token,
      script: throughputScript(context.options.callsPerTurn ?? CALLS_PER_TURN),
      ...(postgres && { postgres: { url: database.url, ...(leaseSeconds && { leaseSeconds }) } }),
      ...(key && { key }),
    });
    started.push(instance);
    return instance;
  };
  try {
    const { sessions, durationSeconds } = context.options;
    const turns = {
      count: sessions,
      warmupMs: Math.min(3000, durationSeconds * 200),
      durationMs: durationSeconds * 1000,
    };

    context.log("postgres: throughput on SQLite, the reference");
    const sqlite = await brain("sqlite", false);
    const onSqlite = await measureTurns(context, [sqlite], turns);
    await sqlite.stop();

    context.log("postgres: throughput on PostgreSQL, one instance");
    const a = await brain("pg-a", true);
    const onOne = await measureTurns(context, [a], turns);
    context.log("postgres: throughput on PostgreSQL, two instances");
    const b = await brain("pg-b", true, a.key);
    const onTwo = await measureTurns(context, [a, b], turns);

    context.log("postgres: delivery to a client on the appending instance and on another");
    const delivery = await measureDelivery(a, b);

    context.log(`postgres: takeover after kill -9 (lease_seconds ${TAKEOVER_LEASE_SECONDS})`);
    const doomed = await brain("pg-doomed", true, a.key, TAKEOVER_LEASE_SECONDS);
    const takeoverSeconds = await measureTakeover(doomed, b);

    const throughput = (name: string, measured: TurnsMeasured): Figure => ({
      name,
      value: measured.perSecond,
      unit: "calls/s",
      reference: { name: "SQLite", value: onSqlite.perSecond },
    });
    const crossTarget = delivery.cross.p99 <= 2 * delivery.same.p99;
    return {
      id: "postgres",
      title: "PostgreSQL store: instances on one database",
      params: {
        sessions,
        duration_s: durationSeconds,
        delivery_sessions: DELIVERY_SESSIONS,
        lease_seconds: TAKEOVER_LEASE_SECONDS,
      },
      figures: [
        throughput("tool calls/s, one instance", onOne),
        throughput("tool calls/s, two instances", onTwo),
        {
          name: "errors (all runs)",
          value: onSqlite.errors + onOne.errors + onTwo.errors,
          unit: "",
          target: { text: "= 0", met: onSqlite.errors + onOne.errors + onTwo.errors === 0 },
        },
        {
          name: "delivery p50, other instance",
          value: delivery.cross.p50,
          unit: "ms",
          reference: { name: "same instance", value: delivery.same.p50 },
        },
        {
          name: "delivery p99, other instance",
          value: delivery.cross.p99,
          unit: "ms",
          reference: { name: "same instance", value: delivery.same.p99 },
          target: { text: "≤ 2× same instance", met: crossTarget },
        },
        {
          name: "takeover after kill -9",
          value: takeoverSeconds,
          unit: "s",
          reference: { name: "lease_seconds", value: TAKEOVER_LEASE_SECONDS },
          target: {
            text: `≤ ${TAKEOVER_LEASE_SECONDS + 2} s`,
            met: takeoverSeconds <= TAKEOVER_LEASE_SECONDS + 2,
          },
        },
      ],
      notes: [
        `SQLite ${onSqlite.perSecond.toFixed(0)} calls/s, PostgreSQL ${onOne.perSecond.toFixed(0)} (one instance) and ${onTwo.perSecond.toFixed(0)} (two, sessions spread over both) on this machine's ${ADMIN_URL.replace(/\/\/[^@]*@/, "//")}; all processes share its cores.`,
        `Delivery: from an event's "at" (set as it is appended, 1 ms resolution) to its arrival at an SSE client, over ${DELIVERY_SESSIONS} sessions of ${DELIVERY_TURNS} turns running on one instance, each watched on it and on the other.`,
        "Takeover: a turn waiting on its model when its instance is killed, until an SSE client on another instance sees turn.failed.",
        ...[onSqlite, onOne, onTwo].flatMap((measured, i) =>
          measured.firstError
            ? [`first error (${["SQLite", "one instance", "two"][i]}): ${measured.firstError}`]
            : [],
        ),
      ],
    };
  } finally {
    await Promise.allSettled([...started.map((instance) => instance.stop()), echo.stop()]);
    await database.drop();
  }
};

async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `brain_bench_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Events of turns running on `owner`, timed at an SSE client on `owner` and one on `other`. */
async function measureDelivery(owner: BenchBrain, other: BenchBrain) {
  const agent = new Agent({ connections: null });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const same: number[] = [];
  const cross: number[] = [];
  // nowMs() is performance time: an event's ISO "at" is wall time, so arrivals are taken in wall time
  const offset = Date.now() - nowMs();
  const latency = (event: ArrivedEvent) => {
    const at = /"at":"([^"]+)"/.exec(event.data)?.[1];
    return at === undefined ? undefined : event.at + offset - Date.parse(at);
  };
  try {
    const ids = await Promise.all(
      Array.from({ length: DELIVERY_SESSIONS }, () =>
        callApi<{ id: string }>(agent, owner, "POST", "/sessions", { config: { tools: ["echo"] } }).then(
          (session) => session.id,
        ),
      ),
    );
    await Promise.all(
      ids.flatMap((id) =>
        [
          [owner, same],
          [other, cross],
        ].map(([brain, into]) =>
          watchEvents(
            agent,
            brain as BenchBrain,
            id,
            (event) => {
              const value = event.seq === undefined ? undefined : latency(event);
              if (value !== undefined) (into as number[]).push(value);
            },
            stop.signal,
          ),
        ),
      ),
    );
    for (let turn = 0; turn < DELIVERY_TURNS; turn++) {
      await Promise.all(ids.map((id) => sendMessage(agent, owner, id)));
      // a turn of the script is ten calls: the next message waits until each has ended
      await waitForIdle(agent, owner, ids);
    }
    return { same: summarize(same), cross: summarize(cross) };
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
  }
}

async function waitForIdle(agent: Agent, brain: BenchBrain, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    for (;;) {
      const session = await callApi<{ status: string }>(agent, brain, "GET", `/sessions/${id}`);
      if (session.status !== "running") break;
      await sleep(20);
    }
  }
}

/** Seconds from kill -9 of the instance running a turn to turn.failed at a client of `other`. */
async function measureTakeover(doomed: BenchBrain, other: BenchBrain): Promise<number> {
  const agent = new Agent({ connections: null });
  const stop = new AbortController();
  try {
    const session = await callApi<{ id: string }>(agent, doomed, "POST", "/sessions", {
      config: { script: [{ delay_ms: 600_000, text: "never" }] },
    });
    let started: () => void = () => {};
    const turnStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let failed: (at: number) => void = () => {};
    const turnFailed = new Promise<number>((resolve) => {
      failed = resolve;
    });
    await watchEvents(
      agent,
      other,
      session.id,
      (event) => {
        if (event.type === "turn.started") started();
        if (event.type === "turn.failed") failed(event.at);
      },
      stop.signal,
    );
    await sendMessage(agent, doomed, session.id);
    await turnStarted;
    const killedAt = nowMs();
    doomed.process.child.kill("SIGKILL");
    return ((await turnFailed) - killedAt) / 1000;
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
  }
}
