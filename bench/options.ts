import { parseArgs } from "node:util";

export interface BenchOptions {
  only: string[] | undefined;
  /** Overhead: sequential tool calls measured per client (Brain, raw, MCP). */
  calls: number;
  /** Overhead: how many times the Brains are started afresh and measured, each set on its own. */
  sets: number;
  /** Throughput: concurrent sessions, and how long they run. */
  sessions: number;
  durationSeconds: number;
  /** Echo calls in each turn: unset, each benchmark's own default (throughput and PostgreSQL 10, instructions 1). */
  callsPerTurn: number | undefined;
  /** Throughput: the length of each session's system prompt, in characters; 0 for none. */
  systemChars: number;
  /** Throughput: the length of each echo call's text, in characters; 0 for the default "hello". */
  payloadChars: number;
  /** Instructions: the turns counted after the warm-up. */
  turns: number;
  /** Fan-out: SSE clients on one session, and the messages whose events they time. */
  clients: number;
  messages: number;
  /** Memory: idle sessions held. */
  idleSessions: number;
  /** Write Brain's V8 CPU profiles into this directory. */
  cpuProfDir: string | undefined;
  /** Run the Brain built in this checkout instead of this one's: before-and-after comparisons. */
  brainRoot: string | undefined;
  /** Overhead: a git revision whose Brain runs beside this one, round for round (an A/B). */
  compare: string | undefined;
  /** Overhead with `compare`: both Brains export traces to a collector in this state. */
  collector: CollectorState | undefined;
  /** NODE_OPTIONS for the Brain processes, as an operator would start them: V8 heap flags, say. */
  brainNodeOptions: string | undefined;
  out: string;
}

/** A collector that takes spans, one that nothing listens for, one that answers every export 500. */
export const COLLECTOR_STATES = ["up", "down", "500"] as const;
export type CollectorState = (typeof COLLECTOR_STATES)[number];

const NUMBERS = {
  calls: { flag: "calls", fallback: 2000, min: 100 },
  sets: { flag: "sets", fallback: 1, min: 1 },
  sessions: { flag: "sessions", fallback: 1000, min: 1 },
  durationSeconds: { flag: "duration", fallback: 20, min: 1 },
  callsPerTurn: { flag: "calls-per-turn", fallback: undefined, min: 1 },
  systemChars: { flag: "system-chars", fallback: 0, min: 0 },
  // the example echo tool takes texts of up to 4,096 characters
  payloadChars: { flag: "payload-chars", fallback: 0, min: 0, max: 4096 },
  turns: { flag: "turns", fallback: 1000, min: 50 },
  clients: { flag: "clients", fallback: 1000, min: 1 },
  messages: { flag: "messages", fallback: 100, min: 10 },
  idleSessions: { flag: "idle-sessions", fallback: 10_000, min: 100 },
} as const;

export const HELP = `npm run bench -- [options]      (or: node dist/bench/run.js [options])

Measures Brain against the raw limit and the peer in one run, prints a table and writes JSON.

  --only LIST            run only these, comma separated: overhead, throughput, fanout, memory, postgres,
                         and sandbox, storage when built (default: all), and instructions, which
                         runs only when named (it needs valgrind and takes minutes)
  --calls N              overhead: sequential tool calls per client (default 2000)
  --sets N               overhead: start the Brains N times, each set of processes warmed up and
                         measured on its own; comparisons are the median of the sets (one process's
                         placement and JIT alone move a set by ±10%: use 3 or more for an A/B)
  --sessions N           throughput: concurrent sessions (default 1000)
  --duration SECONDS     throughput: how long they run (default 20)
  --calls-per-turn N     throughput, postgres, instructions: echo calls in each turn (default 10,
                         and 1 for instructions; an agent's turns often make one or two, and a
                         turn costs more than a call)
  --system-chars N       throughput: each session's system prompt, N characters of prose (default
                         none; an agent's prompt often runs 5,000 to 30,000)
  --payload-chars N      throughput: each echo call's text, N characters up to 4096 (default
                         "hello"): the call, its result and their events carry it, as a tool
                         reading files does; the raw POSTs send the same
  --turns N              instructions: turns counted under callgrind (default 1000), after 4,000
                         to warm up, or with longer turns as many as make 15,000 calls (at least
                         1,000)
  --clients N            fan-out: SSE clients on one session (default 1000)
  --messages N           fan-out: messages whose events are timed (default 100)
  --idle-sessions N      memory: idle sessions held (default 10000)
  --cpu-prof DIR         write Brain's CPU profiles (.cpuprofile) into DIR
  --brain DIR            measure the Brain built in DIR (another checkout, after npm run build)
                         instead of this one: before-and-after comparisons with the same harness
  --compare REF          overhead, instructions: build git revision REF beside the working tree
                         (kept in the system's temporary directory) and run its Brain against
                         this one, the rounds alternating, so both see the same machine: the A/B
                         of a change; instructions counts both builds' instructions side by side
  --collector STATE      overhead with --compare: both Brains export traces to a collector that
                         is up, down (nothing listens) or 500 (answers every export 500): the A/B
                         of a change to the traced path
  --brain-node-options=FLAGS
                         NODE_OPTIONS for every Brain process (not the load generator), as an
                         operator would start it: --brain-node-options=--max-semi-space-size=64, say
                         (README, Run Brain yourself); the results say which
  --out FILE             where the results go (default bench/results.json)
  -h, --help             this text

Each numeric option can also come from the environment: BENCH_CALLS, BENCH_SESSIONS,
BENCH_SETS, BENCH_DURATION, BENCH_CALLS_PER_TURN, BENCH_SYSTEM_CHARS, BENCH_PAYLOAD_CHARS,
BENCH_TURNS, BENCH_CLIENTS, BENCH_MESSAGES, BENCH_IDLE_SESSIONS, and BENCH_BRAIN_NODE_OPTIONS.`;

export type ParsedOptions =
  | { ok: true; options: BenchOptions }
  | { ok: false; help: boolean; problem?: string };

/** Flags win over BENCH_* variables, which win over the defaults of issue 11. */
export function parseOptions(args: string[], env: NodeJS.ProcessEnv): ParsedOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: {
        only: { type: "string" },
        "cpu-prof": { type: "string" },
        brain: { type: "string" },
        compare: { type: "string" },
        collector: { type: "string" },
        "brain-node-options": { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
        ...Object.fromEntries(Object.values(NUMBERS).map(({ flag }) => [flag, { type: "string" }])),
      },
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    return { ok: false, help: false, problem: (error as Error).message };
  }
  if (values.help) return { ok: false, help: true };
  const numbers: Partial<Record<keyof typeof NUMBERS, number>> = {};
  for (const [key, bounds] of Object.entries(NUMBERS)) {
    const { flag, fallback, min } = bounds;
    const max = "max" in bounds ? bounds.max : Number.POSITIVE_INFINITY;
    const envName = `BENCH_${flag.toUpperCase().replace(/-/g, "_")}`;
    const raw = (values[flag] as string | undefined) ?? env[envName];
    const value = raw === undefined ? fallback : Number(raw);
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < min || value > max) {
      const range = max === Number.POSITIVE_INFINITY ? `≥ ${min}` : `from ${min} to ${max}`;
      return { ok: false, help: false, problem: `--${flag} (${envName}): must be an integer ${range}` };
    }
    numbers[key as keyof typeof NUMBERS] = value;
  }
  const collector = values.collector as string | undefined;
  if (collector !== undefined && !(COLLECTOR_STATES as readonly string[]).includes(collector)) {
    return { ok: false, help: false, problem: `--collector: must be one of ${COLLECTOR_STATES.join(", ")}` };
  }
  if (collector !== undefined && values.compare === undefined) {
    return { ok: false, help: false, problem: "--collector: only with --compare" };
  }
  const only = typeof values.only === "string" ? values.only.split(",").map((id) => id.trim()) : undefined;
  return {
    ok: true,
    options: {
      only,
      calls: numbers.calls as number,
      sets: numbers.sets as number,
      sessions: numbers.sessions as number,
      durationSeconds: numbers.durationSeconds as number,
      callsPerTurn: numbers.callsPerTurn,
      systemChars: numbers.systemChars as number,
      payloadChars: numbers.payloadChars as number,
      turns: numbers.turns as number,
      clients: numbers.clients as number,
      messages: numbers.messages as number,
      idleSessions: numbers.idleSessions as number,
      cpuProfDir: values["cpu-prof"] as string | undefined,
      brainRoot: values.brain as string | undefined,
      compare: values.compare as string | undefined,
      collector: collector as CollectorState | undefined,
      // an empty value is no options, as an empty NODE_OPTIONS is
      brainNodeOptions:
        ((values["brain-node-options"] as string | undefined) ?? env.BENCH_BRAIN_NODE_OPTIONS) || undefined,
      out: (values.out as string | undefined) ?? "bench/results.json",
    },
  };
}
