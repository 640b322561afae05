import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Agent } from "undici";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, FLOOR_ENTRY, startBrainProcess } from "./brain-process.js";
import { watchEvents } from "./event-stream.js";
import { makeTemporaryDir, removeTemporaryDir, startEchoService } from "./processes.js";
import type { BenchContext, Benchmark, Figure } from "./section.js";
import { throughputScript } from "./throughput.js";

const run$ = promisify(execFile);

/**
 * Turns before the count starts. V8 optimizes a function after so many calls, not so many seconds,
 * so under valgrind the code reaches the state it does natively after as many turns. Functions a
 * turn calls once keep reaching that point for thousands of turns: after 1,500, half of the next
 * 500 turns' instructions were the optimizing compiler's; after 4,000, 3% of the next 1,000's.
 */
const WARMUP_TURNS = 4000;
/** Sessions the turns go round: each has a history, as a busy Brain's sessions do. */
const SESSIONS = 20;
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
 * Instructions per turn: sequential turns of one echo call through a Brain running under
 * valgrind's callgrind, counting every instruction its process executes in user space (its own
 * JavaScript, V8's compiler and collector with --single-threaded, SQLite, libuv), not the kernel's.
 * A count does not move with the machine's load: the same build counts within 0.2% run to run,
 * where a timed A/B on a shared machine moves ±10% a set. What it cannot see is time spent in
 * system calls and cache misses, which the overhead benchmark measures.
 */
export const run: Benchmark = async (context) => {
  if (!(await callgrindInstalled())) {
    throw new Error("instructions: needs valgrind (apt-get install valgrind), which is not installed");
  }
  const turns = context.options.turns;
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
          script: throughputScript(1),
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
        });
        const counted = { name, brain, dumps };
        started.push(counted);
        return { name, perTurn: await countTurns(context, counted, turns) };
      }),
    );
    return report(counts, turns, reference?.commit);
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

/** `turns` sequential turns after the warm-up, counted: the instructions of one, on average. */
async function countTurns(context: BenchContext, counted: Counted, turns: number): Promise<number> {
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
    context.log(`instructions: ${name}, ${WARMUP_TURNS} turns to warm up, then ${turns} counted`);
    await play(WARMUP_TURNS);
    const pid = String(brain.process.child.pid);
    await run$("callgrind_control", ["--zero", pid]);
    await play(turns);
    await run$("callgrind_control", ["--dump", pid]);
    // the dump made on request is numbered after the file named at the start
    const dump = readdirSync(dumps).find((file) => file !== "callgrind.out");
    const total = dump && callgrindTotal(readFileSync(join(dumps, dump), "utf8"));
    if (!total) throw new Error(`instructions: callgrind wrote no count for ${name}`);
    return total / turns;
  } finally {
    stop.abort();
    await agent.close().catch(() => undefined);
  }
}

function report(counts: { name: string; perTurn: number }[], turns: number, commit?: string) {
  const of = (name: string) => Math.round(counts.find((count) => count.name === name)?.perTurn ?? Number.NaN);
  const figure = (referenceName: string, value: number): Figure => ({
    name: commit ? "instructions per turn vs reference" : "instructions per turn vs the floor",
    value: of("brain"),
    unit: "instructions",
    reference: { name: referenceName, value },
  });
  return {
    id: "instructions",
    title: "Instructions per turn of one echo call (callgrind, sequential turns)",
    params: { warmup_turns: WARMUP_TURNS, turns, sessions: SESSIONS, ...(commit && { reference: commit }) },
    figures: [commit ? figure(commit, of("reference")) : figure("floor", of("floor"))],
    notes: [
      "Every instruction Brain's process executed in user space over the counted turns, divided by the turns: its JavaScript, V8's compiler and collector (run on the main thread with --single-threaded, the collector on a fixed schedule with --predictable-gc-schedule), SQLite and libuv; the kernel's work in system calls is not counted. The same build counts within 0.2% run to run, whatever else the machine does.",
      ...(commit
        ? []
        : [
            "the floor (bench/floor-server.ts): only the I/O a turn needs for Brain's guarantees, counted the same way.",
          ]),
    ],
  };
}
