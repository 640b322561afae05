import { randomBytes } from "node:crypto";
import { Agent } from "undici";
import type { ScriptedStep } from "../protocol/script.js";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, ECHO_STEP, FLOOR_ENTRY, startBrainProcess } from "./brain-process.js";
import { watchEvents } from "./event-stream.js";
import { mcpClient } from "./mcp-peer.js";
import type { CollectorState } from "./options.js";
import { startEchoService, startNode } from "./processes.js";
import { rawClient } from "./raw-post.js";
import { type Benchmark, type Figure, versus } from "./section.js";
import { median, summarize, timeEach } from "./stats.js";

/**
 * Enough for V8 to finish optimizing Brain's hot path: with 200, p50 came out 0.1 ms higher; with
 * 2,000, V8's compiler threads were still optimizing Brain's turn loop in the measured rounds,
 * 120–140 µs a call beside the main thread against 78 µs after 6,000 (the floor's: 55–60 either way).
 */
const WARMUP_CALLS = 6000;
/** The warm-up's calls in turns of 500: a turn stops at 1000 model calls (see MAX_TOOL_STEPS). */
const WARMUP_TURN_CALLS = 500;
const WARMUP_TURNS = WARMUP_CALLS / WARMUP_TURN_CALLS;
/**
 * Rounds alternate the clients, so a drift of the machine touches all of them alike; sixteen short
 * ones rather than four long ones, so that a burst of another process's load falls on each of them.
 */
const ROUNDS = 16;
/** A turn may take 1000 model calls (limits.max_steps_per_turn): 999 tool steps and the last word. */
const MAX_TOOL_STEPS = 999;

/** A turn of `calls` model steps that each make one echo call, then a final text step. */
const echoTurn = (calls: number): ScriptedStep[] => [...Array(calls).fill(ECHO_STEP), { text: "done" }];

/**
 * Tool-call overhead: the per-call latency of one echo call through Brain (a scripted turn, one call
 * per step) against a raw undici POST of the same body to the same service, and against the official
 * MCP SDK client calling an MCP echo tool over Streamable HTTP. All sequential, one call in flight.
 */
export const run: Benchmark = async (context) => {
  const perRound = Math.min(MAX_TOOL_STEPS, Math.ceil(context.options.calls / ROUNDS));
  const { sets } = context.options;
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const mcpServer = await startNode({
    root: context.root,
    args: ["dist/bench/mcp-echo-server.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  const startCollector = (status: number) =>
    startNode({
      root: context.root,
      args: ["dist/bench/otlp-sink.js"],
      env: { STATUS: String(status) },
      ready: (line) => line.match(/listening on (\S+)/)?.[1],
    });
  const collector = await startCollector(200);
  const failing = await startCollector(500);
  // a port nothing listens on: the collector is down
  const down = await startCollector(200);
  await down.stop();
  const script = [
    ...Array.from({ length: WARMUP_TURNS }, () => echoTurn(WARMUP_TURN_CALLS)).flat(),
    ...Array.from({ length: ROUNDS }, () => echoTurn(perRound)).flat(),
  ];
  // the Brains run side by side, so each round measures them under the same machine load: with
  // --compare this tree's against the reference revision's (both exporting to the collector of
  // --collector, if it is given), otherwise this tree's exporting no traces, exporting them,
  // exporting to a collector that is down, and to one that answers 500
  const { reference } = context;
  const { collector: collectorState } = context.options;
  const collectorUrl = { up: collector.ready, down: down.ready, "500": failing.ready };
  const compared: Record<string, string> = collectorState
    ? { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl[collectorState] }
    : {};
  const brains: BrainSpec[] = reference
    ? [
        { name: "brain", label: "overhead", env: compared },
        { name: "reference", label: `overhead-${reference.commit}`, env: compared, root: reference.root },
      ]
    : [
        { name: "brain", label: "overhead", env: {} },
        { name: "floor", label: "overhead-floor", env: {}, root: context.root, entry: FLOOR_ENTRY },
        { name: "traced", label: "overhead-traced", env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.ready } },
        { name: "down", label: "overhead-collector-down", env: { OTEL_EXPORTER_OTLP_ENDPOINT: down.ready } },
        {
          name: "failing",
          label: "overhead-collector-500",
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: failing.ready },
        },
      ];
  const startBrain = ({ label, env, root, entry }: BrainSpec, set: number) =>
    startBrainProcess(context, {
      // each set's profiles apart
      name: sets > 1 ? `${label}-set${set}` : label,
      echoUrl: echo.ready,
      toolsKey: token,
      script,
      env,
      root,
      ...(entry && { entry }),
    });
  const raw = rawClient(echo.ready, "/tools/echo", token);
  const mcp = mcpClient(mcpServer.ready);
  try {
    context.log(`overhead: warming up the raw and MCP clients (${WARMUP_CALLS} calls each)`);
    await timeEach(WARMUP_CALLS, raw.call);
    // in sessions of the warm-up's turn size: the peer's client piles an abort listener a call on
    // one signal per session (mcp-peer.ts), and Node warned of a leak past 1,500
    for (let turn = 0; turn < WARMUP_TURNS; turn++)
      await mcp.session((call) => timeEach(WARMUP_TURN_CALLS, call));
    const measured: SetMeasured[] = [];
    for (let set = 1; set <= sets; set++) {
      const started: { name: string; brain: BenchBrain }[] = [];
      try {
        // one after the other, each stopped below even when a later one fails to start
        for (const spec of brains) started.push({ name: spec.name, brain: await startBrain(spec, set) });
        measured.push(
          await measureSet(context, started, perRound, raw, mcp, sets > 1 ? ` (set ${set}/${sets})` : ""),
        );
      } finally {
        await Promise.allSettled(started.map(({ brain }) => brain.stop()));
      }
    }
    return report(measured, perRound, reference, sets, collectorState);
  } finally {
    await Promise.allSettled([raw.close(), echo.stop(), mcpServer.stop(), collector.stop(), failing.stop()]);
  }
};

/** One Brain of a set: its role in the figures, the name its profile takes, its environment. */
interface BrainSpec {
  name: string;
  label: string;
  env: Record<string, string>;
  root?: string;
  entry?: string;
}

/** What one set of Brain processes measured, with the raw and MCP calls of the same rounds. */
interface SetMeasured {
  brains: Map<string, { samples: number[]; cpuPerCallUs: number; mainThreadCpuPerCallUs: number }>;
  raw: number[];
  /** The raw client's CPU per POST: this process's own, as it runs nothing else in those rounds. */
  rawCpuPerCallUs: number;
  mcp: number[];
}

/** Warm each Brain of a set up, then time them round for round with the raw and MCP clients. */
async function measureSet(
  context: Parameters<Benchmark>[0],
  started: { name: string; brain: BenchBrain }[],
  perRound: number,
  raw: ReturnType<typeof rawClient>,
  mcp: ReturnType<typeof mcpClient>,
  setLabel: string,
): Promise<SetMeasured> {
  const contenders: Contender[] = [];
  try {
    for (const { name, brain } of started)
      contenders.push({
        name,
        brain,
        client: await brainClient(brain),
        samples: [],
        cpuSeconds: 0,
        mainThreadCpuSeconds: 0,
      });
    context.log(`overhead: warming up the Brains${setLabel} (${WARMUP_CALLS} calls each)`);
    // turn by turn across the Brains: a Brain warmed up whole and then left idle while the next
    // warmed up ran its rounds 15-25% slower than one warmed up last, whichever build it was
    for (let turn = 0; turn < WARMUP_TURNS; turn++)
      for (const { client } of contenders) await client.turn(WARMUP_TURN_CALLS);
    const rawSamples: number[] = [];
    let rawCpuUs = 0;
    const mcpSamples: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      context.log(`overhead: round ${round}/${ROUNDS}${setLabel}, ${perRound} calls each`);
      const rawCpuBefore = process.cpuUsage();
      rawSamples.push(...(await timeEach(perRound, raw.call)));
      const rawCpu = process.cpuUsage(rawCpuBefore);
      rawCpuUs += rawCpu.user + rawCpu.system;
      mcpSamples.push(...(await mcp.session((call) => timeEach(perRound, call))));
      // each Brain goes first in turn, so none always follows the same client
      const shift = round % contenders.length;
      for (const contender of [...contenders.slice(shift), ...contenders.slice(0, shift)]) {
        const brainProcess = contender.brain.process;
        const cpuBefore = brainProcess.cpuSeconds();
        const mainThreadCpuBefore = brainProcess.mainThreadCpuSeconds();
        contender.samples.push(...(await contender.client.turn(perRound)));
        contender.cpuSeconds += brainProcess.cpuSeconds() - cpuBefore;
        contender.mainThreadCpuSeconds += brainProcess.mainThreadCpuSeconds() - mainThreadCpuBefore;
      }
    }
    const calls = perRound * ROUNDS;
    return {
      brains: new Map(
        contenders.map(({ name, samples, cpuSeconds, mainThreadCpuSeconds }) => [
          name,
          {
            samples,
            cpuPerCallUs: Math.round((cpuSeconds / calls) * 1e6),
            mainThreadCpuPerCallUs: Math.round((mainThreadCpuSeconds / calls) * 1e6),
          },
        ]),
      ),
      raw: rawSamples,
      rawCpuPerCallUs: Math.round(rawCpuUs / calls),
      mcp: mcpSamples,
    };
  } finally {
    await Promise.allSettled(contenders.map(({ client }) => client.close()));
  }
}

/**
 * The section from every set: latencies from all their samples together; each comparison from
 * each set's own, as the median of the sets (one process's placement and JIT alone can move a set
 * by ±10%), every set's ratio in the notes.
 */
function report(
  measured: SetMeasured[],
  perRound: number,
  reference: { commit: string; root: string } | undefined,
  sets: number,
  collectorState: CollectorState | undefined,
) {
  const all = (name: string) => measured.flatMap((set) => set.brains.get(name)?.samples ?? []);
  const rawSummary = summarize(measured.flatMap((set) => set.raw));
  const figures = [
    ...overheadFigures(summarize(all("brain")), rawSummary, summarize(measured.flatMap((set) => set.mcp))),
  ];
  // per set: a Brain's added latency p50 (against that set's raw POSTs) and its CPU per call
  const addedOf = (set: SetMeasured, name: string) =>
    summarize(set.brains.get(name)?.samples ?? []).p50 - summarize(set.raw).p50;
  const medianOf = (name: string, of: (set: SetMeasured, name: string) => number) =>
    median(measured.map((set) => of(set, name)));
  const cpuOf = (set: SetMeasured, name: string) => set.brains.get(name)?.cpuPerCallUs ?? Number.NaN;
  const cpuMedianOf = (name: string) => Math.round(medianOf(name, cpuOf));
  const mainThreadCpuOf = (set: SetMeasured, name: string) =>
    set.brains.get(name)?.mainThreadCpuPerCallUs ?? Number.NaN;
  const mainThreadCpuMedianOf = (name: string) => Math.round(medianOf(name, mainThreadCpuOf));
  const rawCpu = Math.round(median(measured.map((set) => set.rawCpuPerCallUs)));
  figures.push(
    cpuPerCallFigure("all", cpuMedianOf("brain"), rawCpu),
    cpuPerCallFigure("main", mainThreadCpuMedianOf("brain"), rawCpu),
  );
  const ratios = (name: string, against: string, of: (set: SetMeasured, name: string) => number) =>
    measured.map((set) => `${(of(set, name) / of(set, against)).toFixed(2)}×`).join(", ");
  const notes = [
    "Brain: one session, a scripted turn whose every step makes one echo call; a call's latency is the time between consecutive tool.result events on an SSE client (model step, tool.call stored, POST, result read and checked, tool.result stored and published).",
  ];
  if (sets > 1)
    notes.push(
      `${sets} sets of Brain processes, each started fresh, warmed up and measured on its own; comparisons are the median of the sets.`,
    );
  if (reference) {
    figures.push(
      versus(
        "added latency p50 vs reference",
        medianOf("brain", addedOf),
        reference.commit,
        medianOf("reference", addedOf),
      ),
      versus(
        "tool call p50 vs reference",
        summarize(all("brain")).p50,
        reference.commit,
        summarize(all("reference")).p50,
      ),
      versus(
        "tool call p99 vs reference",
        summarize(all("brain")).p99,
        reference.commit,
        summarize(all("reference")).p99,
      ),
      cpuFigure(
        "CPU per call vs reference",
        cpuMedianOf("brain"),
        reference.commit,
        cpuMedianOf("reference"),
      ),
      cpuFigure(
        "main-thread CPU per call vs reference",
        mainThreadCpuMedianOf("brain"),
        reference.commit,
        mainThreadCpuMedianOf("reference"),
      ),
    );
    notes.push(
      `compare: the Brain of ${reference.commit} (built in ${reference.root}) ran beside this tree's, round for round, each going first in turn; the ratio is this tree's figure over the reference's.`,
      collectorState
        ? `both Brains exported traces to a collector that ${{ up: "took them", down: "was down (nothing listened)", "500": "answered every export 500" }[collectorState]}.`
        : "neither Brain exported traces.",
      `per set, this tree's over the reference's: added latency p50 ${ratios("brain", "reference", addedOf)}; CPU per call ${ratios("brain", "reference", cpuOf)}; main-thread CPU per call ${ratios("brain", "reference", mainThreadCpuOf)}.`,
    );
  } else {
    figures.push(
      ...tracingFigures(
        medianOf("brain", addedOf),
        medianOf("traced", addedOf),
        medianOf("down", addedOf),
        medianOf("failing", addedOf),
        summarize(all("brain")).p99,
        summarize(all("traced")).p99,
      ),
    );
    figures.push(
      cpuFigure("CPU per call vs the floor", cpuMedianOf("brain"), "floor", cpuMedianOf("floor")),
      cpuFigure(
        "main-thread CPU per call vs the floor",
        mainThreadCpuMedianOf("brain"),
        "floor",
        mainThreadCpuMedianOf("floor"),
      ),
      versus(
        "added latency p50 vs the floor",
        medianOf("brain", addedOf),
        "floor",
        medianOf("floor", addedOf),
      ),
    );
    notes.push(
      `the floor (bench/floor-server.ts): only the I/O a call needs for Brain's guarantees (tool.call stored, the POST through undici, the answer parsed, tool.result stored, every event written to the SSE client), run and timed as the Brains are; CPU per call all threads / main thread ${cpuMedianOf("floor")} / ${mainThreadCpuMedianOf("floor")} µs; per set, Brain's CPU per call over the floor's ${ratios("brain", "floor", cpuOf)}, main thread ${ratios("brain", "floor", mainThreadCpuOf)}.`,
      `Brain's CPU per call (user + system, from /proc), all threads / main thread: ${cpuMedianOf("brain")} / ${mainThreadCpuMedianOf("brain")} µs; exporting traces ${cpuMedianOf("traced")} / ${mainThreadCpuMedianOf("traced")} µs; with the collector down ${cpuMedianOf("down")} / ${mainThreadCpuMedianOf("down")} µs; answering 500 ${cpuMedianOf("failing")} / ${mainThreadCpuMedianOf("failing")} µs.`,
      `per set, added latency p50 against no export: exported ${ratios("traced", "brain", addedOf)}; collector down ${ratios("down", "brain", addedOf)}; collector answering 500 ${ratios("failing", "brain", addedOf)}.`,
      "traces: the same Brain exporting every span (turn, model call, tool call, store append) over OTLP/HTTP to a collector's receiving end in its own process (bench/otlp-sink.ts), to a port nothing listens on (collector down), and to a receiving end that answers every export 500; all run side by side with the Brain that exports nothing, each round timing all four.",
    );
  }
  return {
    id: "overhead",
    title: "Tool-call overhead (sequential echo calls)",
    params: {
      calls_per_client: perRound * ROUNDS * sets,
      rounds: ROUNDS,
      sets,
      warmup_calls: WARMUP_CALLS,
      ...(reference && { compared_with: reference.commit }),
    },
    figures,
    notes: [
      ...notes,
      "raw: undici Pool.request POST of Brain's request body to the same echo service, one connection.",
      "MCP: @modelcontextprotocol/sdk Client.callTool over StreamableHTTPClientTransport to an McpServer echo tool (StreamableHTTPServerTransport, stateful session, default SSE responses), in its own process.",
    ],
  };
}

/** A Brain measured in the rounds, with what it measured. */
interface Contender {
  name: string;
  brain: BenchBrain;
  client: Awaited<ReturnType<typeof brainClient>>;
  samples: number[];
  cpuSeconds: number;
  mainThreadCpuSeconds: number;
}

/**
 * Brain's CPU per tool call against what the raw client spends on one POST: all its threads (the
 * target), or its main thread alone, which bounds throughput, as one event loop runs all of
 * Brain's JavaScript while V8 compiles and collects garbage on other threads (and cores).
 */
function cpuPerCallFigure(threads: "all" | "main", brain: number, rawClient: number): Figure {
  return {
    name: threads === "all" ? "Brain's CPU per call vs raw client" : "Brain's main-thread CPU per call",
    value: brain,
    unit: "µs",
    reference: { name: "raw client per POST", value: rawClient },
    ...(threads === "all" && { target: { text: "≤ 200 µs", met: brain <= 200 } }),
  };
}

function cpuFigure(name: string, brain: number, commit: string, reference: number): Figure {
  return {
    name,
    value: brain,
    unit: "µs",
    reference: { name: commit, value: reference },
  };
}

/** What exporting traces adds to Brain's added latency, against the same Brain exporting nothing. */
function tracingFigures(
  addedOff: number,
  addedTraced: number,
  addedDown: number,
  addedFailing: number,
  offP99: number,
  tracedP99: number,
): Figure[] {
  const figure = (name: string, value: number): Figure => ({
    name,
    value,
    unit: "ms",
    reference: { name: "no export", value: addedOff },
  });
  // a collector that cannot take spans slows no turn; one that takes them costs the SDK's work of
  // recording four spans a call, which sampling bounds (README, "What a trace costs")
  const unslowed = (name: string, value: number): Figure => ({
    ...figure(name, value),
    target: { text: "≤ 1.05×", met: value <= addedOff * 1.05 },
  });
  return [
    figure("added latency p50, traces exported", addedTraced),
    unslowed("added latency p50, collector down", addedDown),
    unslowed("added latency p50, collector 500", addedFailing),
    versus("tool call p99, traces exported", tracedP99, "no export", offP99),
  ];
}

function overheadFigures(
  brain: ReturnType<typeof summarize>,
  raw: ReturnType<typeof summarize>,
  mcp: ReturnType<typeof summarize>,
): Figure[] {
  const added = brain.p50 - raw.p50;
  return [
    versus("tool call p50 vs raw POST", brain.p50, "raw POST", raw.p50),
    versus("tool call p99 vs raw POST", brain.p99, "raw POST", raw.p99),
    {
      name: "Brain's added latency p50",
      value: added,
      unit: "ms",
      target: { text: "≤ 0.3 ms", met: added <= 0.3 },
    },
    {
      ...versus("tool call p50 vs MCP SDK", brain.p50, "MCP callTool", mcp.p50),
      target: { text: "faster than MCP", met: brain.p50 < mcp.p50 },
    },
    versus("tool call p99 vs MCP SDK", brain.p99, "MCP callTool", mcp.p99),
  ];
}

/** Brain's side: one session watched over SSE; each `turn()` yields the latency of each of its calls. */
async function brainClient(brain: BenchBrain) {
  const agent = new Agent();
  const stop = new AbortController();
  const session = await createSession(agent, brain);
  let onResult: ((at: number) => void) | undefined;
  let onEnd: ((type: string) => void) | undefined;
  const watched = await watchEvents(
    agent,
    brain,
    session.id,
    (event) => {
      if (event.type === "tool.result") onResult?.(event.at);
      else if (event.type.startsWith("turn.") && event.type !== "turn.started") onEnd?.(event.type);
    },
    stop.signal,
  );
  return {
    /** The latencies of a turn that makes `calls` calls (its script's next turn). */
    turn: async (calls: number): Promise<number[]> => {
      const samples: number[] = [];
      let last: number | undefined;
      // the first call of a turn also pays the turn's start; every later one is one step
      onResult = (at) => {
        if (last !== undefined) samples.push(at - last);
        last = at;
      };
      const ended = new Promise<string>((resolve) => {
        onEnd = resolve;
      });
      await sendMessage(agent, brain, session.id);
      const end = await ended;
      if (end !== "turn.completed") throw new Error(`the bench turn ended with ${end}`);
      // a turn cut short (at the turn's step limit, say) leaves the script's calls to the next
      // turns, which would then time another turn's calls than they count
      if (samples.length !== calls - 1)
        throw new Error(`the bench turn made ${samples.length + 1} calls, not the ${calls} of its script`);
      return samples;
    },
    close: async () => {
      stop.abort();
      await watched.closed.catch(() => undefined);
      await agent.close();
    },
  };
}
