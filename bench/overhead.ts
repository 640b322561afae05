import { randomBytes } from "node:crypto";
import { Agent } from "undici";
import type { ScriptedStep } from "../protocol/script.js";
import { createSession, sendMessage } from "./api.js";
import { type BenchBrain, ECHO_STEP, startBrainProcess } from "./brain-process.js";
import { watchEvents } from "./event-stream.js";
import { mcpClient } from "./mcp-peer.js";
import { startEchoService, startNode } from "./processes.js";
import { rawClient } from "./raw-post.js";
import { type Benchmark, type Figure, versus } from "./section.js";
import { summarize, timeEach } from "./stats.js";

/** Enough for V8 to finish optimizing Brain's hot path: with 200, p50 came out 0.1 ms higher. */
const WARMUP_CALLS = 2000;
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
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const mcpServer = await startNode({
    root: context.root,
    args: ["dist/bench/mcp-echo-server.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  const collector = await startNode({
    root: context.root,
    args: ["dist/bench/otlp-sink.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  // a port nothing listens on: the collector is down
  const down = await startNode({
    root: context.root,
    args: ["dist/bench/otlp-sink.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  await down.stop();
  const script = [
    ...echoTurn(WARMUP_CALLS),
    ...Array.from({ length: ROUNDS }, () => echoTurn(perRound)).flat(),
  ];
  const brainAs = (name: string, env: Record<string, string> = {}, root?: string) =>
    startBrainProcess(context, { name, echoUrl: echo.ready, toolsKey: token, script, env, root });
  // the Brains run side by side, so each round measures them under the same machine load: with
  // --compare this tree's against the reference revision's, otherwise this tree's exporting no
  // traces, exporting them, and exporting to a collector that is down
  const { reference } = context;
  const started = reference
    ? [
        { name: "brain", brain: await brainAs("overhead") },
        {
          name: "reference",
          brain: await brainAs(`overhead-${reference.commit}`, {}, reference.root),
        },
      ]
    : [
        { name: "brain", brain: await brainAs("overhead") },
        {
          name: "traced",
          brain: await brainAs("overhead-traced", { OTEL_EXPORTER_OTLP_ENDPOINT: collector.ready }),
        },
        {
          name: "down",
          brain: await brainAs("overhead-collector-down", { OTEL_EXPORTER_OTLP_ENDPOINT: down.ready }),
        },
      ];
  const contenders: Contender[] = [];
  for (const { name, brain } of started)
    contenders.push({ name, brain, client: await brainClient(brain), samples: [], cpuSeconds: 0 });
  const raw = rawClient(echo.ready, "/tools/echo", token);
  const mcp = mcpClient(mcpServer.ready);
  try {
    context.log(`overhead: warming up (${WARMUP_CALLS} calls each)`);
    await timeEach(WARMUP_CALLS, raw.call);
    await mcp.session((call) => timeEach(WARMUP_CALLS, call));
    for (const { client } of contenders) await client.turn();
    const rawSamples: number[] = [];
    const mcpSamples: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      context.log(`overhead: round ${round}/${ROUNDS}, ${perRound} calls each`);
      rawSamples.push(...(await timeEach(perRound, raw.call)));
      mcpSamples.push(...(await mcp.session((call) => timeEach(perRound, call))));
      // each Brain goes first in turn, so none always follows the same client
      const shift = round % contenders.length;
      for (const contender of [...contenders.slice(shift), ...contenders.slice(0, shift)]) {
        const cpuBefore = contender.brain.process.cpuSeconds();
        contender.samples.push(...(await contender.client.turn()));
        contender.cpuSeconds += contender.brain.process.cpuSeconds() - cpuBefore;
      }
    }
    const calls = perRound * ROUNDS;
    const cpuPerCall = (contender: Contender | undefined) =>
      contender ? Math.round((contender.cpuSeconds / calls) * 1e6) : Number.NaN;
    const measured = (name: string) => contenders.find((contender) => contender.name === name);
    const summary = (name: string) => summarize(measured(name)?.samples ?? []);
    const rawSummary = summarize(rawSamples);
    const figures = [...overheadFigures(summary("brain"), rawSummary, summarize(mcpSamples))];
    const notes = [
      "Brain: one session, a scripted turn whose every step makes one echo call; a call's latency is the time between consecutive tool.result events on an SSE client (model step, tool.call stored, POST, result read and checked, tool.result stored and published).",
    ];
    if (reference) {
      figures.push(
        ...comparisonFigures(reference.commit, summary("brain"), summary("reference"), rawSummary),
        cpuFigure(cpuPerCall(measured("brain")), reference.commit, cpuPerCall(measured("reference"))),
      );
      notes.push(
        `compare: the Brain of ${reference.commit} (built in ${reference.root}) ran beside this tree's, round for round, each going first in turn; the ratio is this tree's figure over the reference's.`,
      );
    } else {
      figures.push(...tracingFigures(summary("brain"), summary("traced"), summary("down"), rawSummary));
      notes.push(
        `Brain's CPU per call (user + system, from /proc): ${cpuPerCall(measured("brain"))} µs; exporting traces ${cpuPerCall(measured("traced"))} µs; with the collector down ${cpuPerCall(measured("down"))} µs.`,
        "traces: the same Brain exporting every span (turn, model call, tool call, store append) over OTLP/HTTP to a collector's receiving end in its own process (bench/otlp-sink.ts), and to a port nothing listens on (collector down); both run side by side with the Brain that exports nothing, each round timing all three.",
      );
    }
    return {
      id: "overhead",
      title: "Tool-call overhead (sequential echo calls)",
      params: {
        calls_per_client: calls,
        rounds: ROUNDS,
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
  } finally {
    await Promise.allSettled([raw.close(), ...contenders.map(({ client }) => client.close())]);
    await Promise.allSettled([
      ...started.map(({ brain }) => brain.stop()),
      echo.stop(),
      mcpServer.stop(),
      collector.stop(),
    ]);
  }
};

/** A Brain measured in the rounds, with what it measured. */
interface Contender {
  name: string;
  brain: BenchBrain;
  client: Awaited<ReturnType<typeof brainClient>>;
  samples: number[];
  cpuSeconds: number;
}

/** This tree's Brain against the reference revision's, from the same rounds. */
function comparisonFigures(
  commit: string,
  brain: ReturnType<typeof summarize>,
  reference: ReturnType<typeof summarize>,
  raw: ReturnType<typeof summarize>,
): Figure[] {
  return [
    versus("added latency p50 vs reference", brain.p50 - raw.p50, commit, reference.p50 - raw.p50),
    versus("tool call p50 vs reference", brain.p50, commit, reference.p50),
    versus("tool call p99 vs reference", brain.p99, commit, reference.p99),
  ];
}

function cpuFigure(brain: number, commit: string, reference: number): Figure {
  return {
    name: "CPU per call vs reference",
    value: brain,
    unit: "µs",
    reference: { name: commit, value: reference },
  };
}

/** What exporting traces adds to Brain's added latency, against the same Brain exporting nothing. */
function tracingFigures(
  off: ReturnType<typeof summarize>,
  traced: ReturnType<typeof summarize>,
  down: ReturnType<typeof summarize>,
  raw: ReturnType<typeof summarize>,
): Figure[] {
  const addedOff = off.p50 - raw.p50;
  const figure = (name: string, value: number): Figure => ({
    name,
    value,
    unit: "ms",
    reference: { name: "no export", value: addedOff },
    target: { text: "≤ 1.05×", met: value <= addedOff * 1.05 },
  });
  return [
    figure("added latency p50, traces exported", traced.p50 - raw.p50),
    figure("added latency p50, collector down", down.p50 - raw.p50),
    versus("tool call p99, traces exported", traced.p99, "no export", off.p99),
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
    turn: async (): Promise<number[]> => {
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
      return samples;
    },
    close: async () => {
      stop.abort();
      await watched.closed.catch(() => undefined);
      await agent.close();
    },
  };
}
