import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Agent } from "undici";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, FLOOR_ENTRY, startBrainProcess } from "./brain-process.js";
import { watchEvents } from "./event-stream.js";
import { makeTemporaryDir, removeTemporaryDir, startEchoService } from "./processes.js";
import type { BenchContext, Benchmark, Figure } from "./section.js";
import { median } from "./stats.js";
import { throughputScript } from "./throughput.js";

const run$ = promisify(execFile);

/**
 * Turns before the count starts. V8 optimizes a function after so many calls, not so many seconds,
 * so under valgrind the code reaches the state it does natively after as many turns. Functions a
 * turn calls once keep reaching that point for thousands of turns: after 1,500, half of the next
 * 500 turns' instructions were the optimizing compiler's; after 4,000, 3% of the next 1,000's.
 */
const WARMUP_TURNS = 4000;
/**
 * Turns of more than one call before the count starts: as many as make this many calls, so each
 * call's code is as warm as in turns of one, and at least 1,000 (a turn's own code then still
 * compiles now and then, a share of a turn that its calls dilute). Under valgrind a turn of ten
 * calls takes about four of one.
 */
const WARMUP_CALLS = 15_000;

function warmupTurnsFor(callsPerTurn: number): number {
  return callsPerTurn === 1 ? WARMUP_TURNS : Math.max(1000, Math.ceil(WARMUP_CALLS / callsPerTurn));
}
/** Sessions the turns go round: each has a history, as a busy Brain's sessions do. */
const SESSIONS = 20;
/**
 * The counted turns in windows, each dumped on its own: a major collection or a WAL checkpoint
 * costs hundreds of turns' instructions at once and falls in one window or the next, so the median
 * window is the figure a change to a turn's path moves, and the mean carries the lumps.
 */
const WINDOWS = 5;
/** valgrind runs Node 50 to 60 times slower: its start alone takes seconds. */
const READY_TIMEOUT_MS = 180_000;

/** The program total of a callgrind dump, as callgrind_annotate prints it: its `summary:` line. */
export function callgrindTotal(dump: string): number | undefined {
  const line = /^summary:\s+(\d+)$/m.exec(dump);
  return line ? Number(line[1]) : undefined;
}

/** Whether valgrind and its callgrind_control are on this machine. */
async function callgrindInstalled(): Promise<boolean> {
  try {
    await Promise.all([run$("valgrind", ["--version"]), run$("callgrind_control", ["--help"])]);
    return true;
  } catch {
    return false;
  }
}

/** One Brain under callgrind, and where its dumps go. */
interface Counted {
  name: string;
  brain: BenchBrain;
  dumps: string;
}

/**
 * Instructions per turn: sequential turns of one echo call (or of --calls-per-turn) through a Brain
 * running under valgrind's callgrind, counting every instruction its process executes in user
 * space (its own JavaScript, V8's compiler and collector with --single-threaded, SQLite, libuv),
 * not the kernel's.
 * On an idle machine the same build counts within 0.2% run to run, where a timed A/B on a shared
 * machine moves ±10% a set; a busy machine still moves a count by a few percent (how a turn's I/O
 * falls into the event loop's iterations changes with it), so both builds are counted side by
 * side. What it cannot see is time spent in system calls and cache misses, which the overhead
 * benchmark measures.
 */
export const run: Benchmark = async (context) => {
  if (!(await callgrindInstalled())) {
    throw new Error("instructions: needs valgrind (apt-get install valgrind), which is not installed");
  }
  const turns = context.options.turns;
  const callsPerTurn = context.options.callsPerTurn ?? 1;
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const { reference } = context;
  const contenders = reference
    ? [
        { name: "brain", root: undefined, entry: undefined },
        { name: "reference", root: reference.root, entry: undefined },
      ]
    : [
        { name: "brain", root: undefined, entry: undefined },
        { name: "floor", root: context.root, entry: FLOOR_ENTRY },
      ];
  const started: Counted[] = [];
  try {
    // side by side: each count is its own process's, whatever the other does
    const counts = await Promise.all(
      contenders.map(async ({ name, root, entry }) => {
        const dumps = makeTemporaryDir(`brain-callgrind-${name}-`);
        const brain = await startBrainProcess(context, {
          name: `instructions-${name}`,
          echoUrl: echo.ready,
          toolsKey: token,
          script: throughputScript(callsPerTurn),
          root,
          ...(entry && { entry }),
          // the compiler and the collector on the main thread, so that what they do is counted
          // where it is done and not by threads whose timing varies; and the collector's
          // schedule fixed, not led by allocation per millisecond, which valgrind slows 50 times
          execArgv: ["--single-threaded", "--predictable-gc-schedule"],
          launcher: [
            "valgrind",
            "--tool=callgrind",
            `--callgrind-out-file=${join(dumps, "callgrind.out")}`,
            // V8 writes and rewrites its code: valgrind must see it
            "--smc-check=all-non-file",
          ],
          readyTimeoutMs: READY_TIMEOUT_MS,
        }).catch((error: unknown) => {
          removeTemporaryDir(dumps);
          throw error;
        });
        const counted = { name, brain, dumps };
        started.push(counted);
        return { name, ...(await countTurns(context, counted, turns, warmupTurnsFor(callsPerTurn))) };
      }),
    );
    return report(counts, { turns, callsPerTurn }, reference?.commit);
  } finally {
    await Promise.allSettled([
      echo.stop(),
      ...started.map(async ({ brain, dumps }) => {
        await brain.stop();
        removeTemporaryDir(dumps);
      }),
    ]);
  }
};

/** Instructions a turn in each window of counted turns, their median and their mean. */
interface WindowCounts {
  windows: number[];
  median: number;
  mean: number;
}

/** `turns` sequential turns after the warm-up, counted in windows. */
async function countTurns(
  context: BenchContext,
  counted: Counted,
  turns: number,
  warmupTurns: number,
): Promise<WindowCounts> {
  const { brain, dumps, name } = counted;
  const agent = new Agent({ connections: null });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  try {
    const sessions: { id: string; ended: (failure?: string) => void }[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const { id } = await createSession(agent, brain);
      const session = { id, ended: (_failure?: string) => {} };
      await watchEvents(
        agent,
        brain,
        id,
        (event) => {
          if (event.type === "turn.completed") session.ended();
          else if (event.type === "turn.failed" || event.type === "turn.interrupted")
            session.ended(event.data.slice(0, 300));
        },
        stop.signal,
      );
      sessions.push(session);
    }
    let next = 0;
    const play = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const session = sessions[next++ % sessions.length] as (typeof sessions)[number];
        const ended = new Promise<string | undefined>((resolve) => {
          session.ended = resolve;
        });
        await sendMessage(agent, brain, session.id);
        const failure = await ended;
        if (failure) throw new Error(`instructions: a turn of ${name} failed: ${failure}`);
      }
    };
    const perWindow = Math.ceil(turns / WINDOWS);
    context.log(
      `instructions: ${name}, ${warmupTurns} turns to warm up, then ${WINDOWS} windows of ${perWindow} counted`,
    );
    await play(warmupTurns);
    const pid = String(brain.process.child.pid);
    await run$("callgrind_control", ["--zero", pid]);
    const windows: number[] = [];
    for (let window = 1; window <= WINDOWS; window++) {
      await play(perWindow);
      // a dump holds what was counted since the last one, and is numbered after the file named
      // at the start: callgrind.out.1, .2, ...
      await run$("callgrind_control", ["--dump", pid]);
      const file = join(dumps, `callgrind.out.${window}`);
      const total = existsSync(file) ? callgrindTotal(readFileSync(file, "utf8")) : undefined;
      if (!total) throw new Error(`instructions: callgrind wrote no count for ${name}`);
      windows.push(total / perWindow);
    }
    return {
      windows,
      median: median(windows),
      mean: windows.reduce((sum, count) => sum + count, 0) / WINDOWS,
    };
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
  }
}

type Counts = WindowCounts & { name: string };

function report(
  counts: Counts[],
  { turns, callsPerTurn }: { turns: number; callsPerTurn: number },
  commit?: string,
) {
  const countsOf = (name: string) => counts.find((count) => count.name === name);
  const other = commit ? "reference" : "floor";
  const versusOther = commit ? "vs reference" : "vs the floor";
  const figure = (what: string, pick: (count: Counts) => number): Figure => ({
    name: `instructions per turn, ${what}, ${versusOther}`,
    value: Math.round(pick(countsOf("brain") as Counts)),
    unit: "instructions",
    reference: { name: commit ?? "floor", value: Math.round(pick(countsOf(other) as Counts)) },
  });
  const windowsOf = (count: Counts) =>
    `${count.name} ${count.windows.map((window) => Math.round(window).toLocaleString("en")).join(", ")}`;
  return {
    id: "instructions",
    title: `Instructions per turn of ${callsPerTurn === 1 ? "one echo call" : `${callsPerTurn} echo calls`} (callgrind, sequential turns)`,
    params: {
      warmup_turns: warmupTurnsFor(callsPerTurn),
      turns,
      calls_per_turn: callsPerTurn,
      windows: WINDOWS,
      sessions: SESSIONS,
      ...(commit && { reference: commit }),
    },
    figures: [figure("median window", (count) => count.median), figure("mean", (count) => count.mean)],
    notes: [
      `instructions a turn in each window of ${Math.ceil(turns / WINDOWS)} turns: ${counts.map(windowsOf).join("; ")}.`,
      "Every instruction Brain's process executed in user space over each window of counted turns, divided by its turns (the median window is what a change to a turn's path moves; the mean carries the major collections and WAL checkpoints that fall in one window or the next): its JavaScript, V8's compiler and collector (run on the main thread with --single-threaded, the collector on a fixed schedule with --predictable-gc-schedule), SQLite and libuv; the kernel's work in system calls is not counted. On an idle machine the same build counts within 0.2% run to run; a busy one moves a count by a few percent, so compare builds counted in the same run.",
      ...(commit
        ? []
        : [
            "the floor (bench/floor-server.ts): only the I/O a turn needs for Brain's guarantees, counted the same way.",
          ]),
    ],
  };
}
