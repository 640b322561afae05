import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWhenMain } from "./alone.js";
import { mcpClient } from "./mcp-peer.js";
import { startNode } from "./processes.js";
import { rawClient } from "./raw-post.js";
import { type Benchmark, versus } from "./section.js";
import { summarize, timeEach } from "./stats.js";

const WARMUP = 500;
const ROUNDS = 4;

/**
 * What the MCP bridge adds: an echo call through the bridge (Brain's POST to it, the bridge's
 * MCP SDK client, the MCP server) against the MCP SDK's callTool straight to the same server,
 * in the same run, sequential, one call in flight.
 */
export const run: Benchmark = async (context) => {
  const perRound = Math.max(50, Math.ceil(context.options.calls / ROUNDS));
  const dir = await mkdtemp(join(tmpdir(), "bench-mcp-bridge-"));
  const server = await startNode({
    root: context.root,
    args: ["dist/bench/mcp-echo-server.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  const token = randomBytes(24).toString("base64url");
  const config = join(dir, "mcp-bridge.json");
  await writeFile(
    config,
    JSON.stringify({
      listen: "127.0.0.1:0",
      token_env: "MCP_BRIDGE_KEY",
      log_level: "info", // as deployed: one log line per call
      mcpServers: { bench: { url: server.ready } },
    }),
  );
  const bridge = await startNode({
    root: context.root,
    args: ["dist/services/mcp-bridge/main.js", "--config", config],
    env: { MCP_BRIDGE_KEY: token },
    ready: (line) =>
      line.includes("tool service listening") ? (JSON.parse(line) as { url: string }).url : undefined,
  }).catch(async (error: unknown) => {
    await server.stop();
    throw error;
  });
  const raw = rawClient(bridge.ready, "/tools/bench_echo", token);
  const direct = mcpClient(server.ready).session;
  const throughBridge = async () => {
    const text = await raw.call();
    if (!text.includes("hello")) throw new Error(`the bridge answered: ${text.slice(0, 200)}`);
  };
  try {
    context.log(`mcp-bridge: warming up (${WARMUP} calls each)`);
    await timeEach(WARMUP, throughBridge);
    await direct((call) => timeEach(WARMUP, call));
    const samples = { bridge: [] as number[], direct: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      context.log(`mcp-bridge: round ${round}/${ROUNDS}, ${perRound} calls each`);
      samples.bridge.push(...(await timeEach(perRound, throughBridge)));
      samples.direct.push(...(await direct((call) => timeEach(perRound, call))));
    }
    const viaBridge = summarize(samples.bridge);
    const straight = summarize(samples.direct);
    return {
      id: "mcp-bridge",
      title: "MCP bridge: an echo through the bridge vs the MCP SDK straight to the server",
      params: { calls_per_client: perRound * ROUNDS, rounds: ROUNDS, warmup_calls: WARMUP },
      figures: [
        versus("echo via bridge p50 vs MCP callTool", viaBridge.p50, "MCP callTool", straight.p50),
        versus("echo via bridge p99 vs MCP callTool", viaBridge.p99, "MCP callTool", straight.p99),
        { name: "the bridge's added latency p50", value: viaBridge.p50 - straight.p50, unit: "ms" },
      ],
      notes: [
        "via bridge: undici Pool POST of Brain's request body to the bridge (services/mcp-bridge, its own process), which calls the MCP echo server with the MCP SDK client over Streamable HTTP and answers as an event stream; the POST ends when the result event is read.",
        "MCP callTool: @modelcontextprotocol/sdk Client.callTool over StreamableHTTPClientTransport to the same MCP echo server process (bench/mcp-echo-server.ts), a session of its own per round.",
      ],
    };
  } finally {
    await raw.close();
    await Promise.allSettled([bridge.stop(), server.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
};

await runWhenMain(import.meta.url, run);
