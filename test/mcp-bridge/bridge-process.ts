import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import type { ToolManifest } from "../../kit/index.js";
import { hostConfigFor } from "../../src/cli/tools-config-command.js";
import type { BrainClient, SessionEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { ROOT } from "../helpers/cli.js";
import { closedPort } from "../helpers/ports.js";
import { type StartedProcess, startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";

export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
export const STDIN_TAP = join(ROOT, "test/mcp-bridge/stdin-tap.mjs");
export const TWICE = join(ROOT, "test/mcp-bridge/twice-server.mjs");

/** `${NAME}`: how a bridge config names one of the bridge's environment variables. */
export const fromEnv = (name: string) => `\${${name}}`;

export interface Bridge {
  url: string;
  token: string;
  dir: string;
  configPath: string;
  process: StartedProcess;
  /** Every line the bridge wrote. */
  logs: () => string;
  /** Its JSON log lines whose msg is `message`. */
  logged: (message: string) => Record<string, unknown>[];
  stop: () => Promise<void>;
}

/**
 * The real bridge process (built, in dist/) with a config of these `mcpServers` in a temporary
 * folder (their relative paths resolve there), a random token, and short restart waits.
 */
export async function startBridge(
  servers: Record<string, unknown>,
  options: {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
    /** Makes what the servers need in the bridge's folder before it starts. */
    prepare?: (dir: string) => void;
  } = {},
): Promise<Bridge> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-test-"));
  options.prepare?.(dir);
  const configPath = join(dir, "mcp-bridge.json");
  const token = `bridge-${randomBytes(12).toString("hex")}`;
  writeFileSync(
    configPath,
    JSON.stringify({
      listen: "127.0.0.1:0",
      token_env: "MCP_BRIDGE_KEY",
      log_level: "debug",
      keep_alive_seconds: 0.5,
      restart: { initial_seconds: 0.2, max_seconds: 1 },
      ...options.config,
      mcpServers: servers,
    }),
  );
  const started = await startProcess(
    ["dist/services/mcp-bridge/main.js", "--config", configPath],
    { MCP_BRIDGE_KEY: token, ...options.env },
    toolServiceUrlFromLog,
    20_000,
  );
  const logs = () => started.output.join("\n");
  return {
    url: started.ready,
    token,
    dir,
    configPath,
    process: started,
    logs,
    logged: (message) =>
      started.output
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry.msg === message),
    stop: async () => {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function manifestOf(bridge: Bridge): Promise<ToolManifest> {
  const response = await request(`${bridge.url}/tools`, {
    headers: { authorization: `Bearer ${bridge.token}` },
  });
  return (await response.body.json()) as ToolManifest;
}

/** A real Brain whose tools are the bridge's, as `brain tools config` binds them, offered to both tenants. */
export async function startBrainFor(bridge: Bridge): Promise<TestBrain> {
  const config = hostConfigFor(await manifestOf(bridge), {
    base: `${bridge.url}/tools`,
    tokenEnv: "MCP_BRIDGE_KEY",
    tenant: "acme",
    apiKeyEnv: "KEY_ACME",
    listen: "127.0.0.1:0",
    store: "./brain.db",
  });
  const tools = (config.tools ?? []).map((tool) => ({ ...tool, tenants: ["acme", "globex"] }));
  return startBrain({ tools }, { env: { MCP_BRIDGE_KEY: bridge.token } });
}

/** server-everything over Streamable HTTP on a free loopback port, once it accepts connections. */
export async function startEverythingOverHttp(): Promise<{
  url: string;
  stop: () => Promise<number | null>;
}> {
  const port = await closedPort();
  const started = await startProcess([EVERYTHING, "streamableHttp"], { PORT: String(port) }, (line) =>
    line.includes("Starting Streamable HTTP server") ? true : undefined,
  );
  for (let attempt = 0; ; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) break;
    if (attempt > 200)
      throw new Error(`server-everything never listened on ${port}:\n${started.output.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => started.stop() };
}

/** A session of the scripted model that calls `tool` once with `args`, then says the result. */
export function sessionCalling(client: BrainClient, tool: string, args: Record<string, unknown>) {
  return client.createSession({
    tools: [tool],
    script: [{ tool_calls: [{ name: tool, arguments: args }] }, { text: "{{result}}" }],
  });
}

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.interrupted"]);

/** Send a message and collect the turn's events, live ones too; `atProgress(n)` runs on the n-th tool.progress. */
export async function turnActing(
  client: BrainClient,
  sessionId: string,
  atProgress: (count: number) => unknown,
): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  const stream = client.streamEvents(sessionId, { signal: AbortSignal.timeout(15_000) });
  const first = stream.next();
  await client.sendMessage(sessionId, "go");
  let progress = 0;
  for (let next = await first; !next.done; next = await stream.next()) {
    events.push(next.value);
    if (next.value.type === "tool.progress") await atProgress(++progress);
    if (TURN_ENDS.has(next.value.type)) break;
  }
  await stream.return(undefined);
  return events;
}
