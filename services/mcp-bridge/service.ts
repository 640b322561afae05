import type { Logger } from "pino";
import { createServiceLogger, type RunningService, serve, type Tool } from "../../kit/index.js";
import { bridgedTool } from "./bridged-tool.js";
import type { McpBridgeConfig } from "./config.js";
import { describe } from "./connection.js";
import { ServerPool } from "./server-pool.js";
import { brainToolNames } from "./tool-names.js";

export interface RunningMcpBridge {
  /** `http://host:port`; the tools answer at `{url}/tools/{name}`. */
  url: string;
  logger: Logger;
  service: RunningService;
  /** The connections to each configured server, by its key in mcpServers. */
  pools: ReadonlyMap<string, ServerPool>;
  close(): Promise<void>;
}

/**
 * Start every configured MCP server and list its tools (failing, saying which server and why, when
 * one does not start), then serve them all as Brain tools; the list follows each server's
 * `tools/list_changed` and restarts.
 */
export async function startMcpBridge(
  config: McpBridgeConfig,
  options: { logger?: Logger } = {},
): Promise<RunningMcpBridge> {
  const logger = options.logger ?? createServiceLogger("mcp-bridge", config.logLevel);
  let service: RunningService | undefined;
  const pools = new Map<string, ServerPool>();
  const served = (): Tool[] => {
    const listed = [...pools.values()].flatMap((pool) => pool.lister.tools.map((tool) => ({ pool, tool })));
    const { names, renamed } = brainToolNames(
      listed.map(({ pool, tool }) => ({
        server: pool.server.name,
        prefix: pool.server.prefix,
        name: tool.name,
      })),
    );
    for (const line of renamed) logger.warn(line);
    return listed.flatMap(({ pool, tool }, i) => bridgedTool(names[i] as string, tool, pool, logger) ?? []);
  };
  const connection = { logger, restart: config.restart, startupTimeoutMs: config.startupTimeoutMs };
  for (const server of config.servers) {
    pools.set(server.name, new ServerPool(server, connection, () => service?.setTools(served())));
  }
  const closeAll = () => Promise.all([...pools.values()].map((pool) => pool.close()));
  const started = await Promise.allSettled([...pools.values()].map((pool) => pool.start()));
  const failures = started.flatMap((outcome) =>
    outcome.status === "rejected" ? [describe(outcome.reason)] : [],
  );
  if (failures.length > 0) {
    await closeAll();
    throw new Error(failures.join("\n"));
  }
  try {
    service = await serve({
      tools: served(),
      token: config.token.reveal(),
      host: config.listen.host,
      port: config.listen.port,
      keepAliveMs: config.keepAliveMs,
      logger,
      name: "mcp-bridge",
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  const running = service;
  return {
    url: running.url,
    logger,
    service: running,
    pools,
    close: async () => {
      await running.close();
      await closeAll();
    },
  };
}
