import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describe, McpConnection, ServerUnavailable } from "../../services/mcp-bridge/connection.js";
import { startTinyMcpServer, type TinyMcpServer, tinyServerConfig } from "./tiny-mcp-server.js";

let tiny: TinyMcpServer;
let connection: McpConnection | undefined;

beforeEach(async () => {
  tiny = await startTinyMcpServer();
});
afterEach(async () => {
  await connection?.close();
  await tiny.close();
  connection = undefined;
});

const STARTUP_MS = 500;

function newConnection(): McpConnection {
  connection = new McpConnection(tinyServerConfig(tiny.url), {
    logger: pino({ level: "silent" }),
    restart: { initialMs: 200, maxMs: 1000 },
    startupTimeoutMs: STARTUP_MS,
  });
  return connection;
}

const hello = (to: McpConnection) =>
  to.call("hello", {}, { signal: AbortSignal.timeout(10_000), onProgress: () => undefined });

// the SDK waits for the answer to the initialized notification with no limit of its own: only
// the start's bound ends it
it("gives up a start whose initialized notification the server never answers, in the startup time, and ends its session", async () => {
  tiny.hang("initialized");
  const began = Date.now();
  await expect(newConnection().start()).rejects.toThrow(
    'the MCP server "tiny" did not start: it did not finish starting within startup_timeout_seconds (0.5 s)',
  );
  // and the DELETE ending the session, which the server answers at once
  expect(Date.now() - began).toBeLessThan(STARTUP_MS + 500);
  expect(tiny.sessions).toHaveLength(1);
  expect(tiny.deletes).toEqual(tiny.sessions);
  await expect.poll(() => tiny.openRequests()).toBe(0);
});

it("restarts, with the backoff, a new session that stalls after its initialize, saying why meanwhile", async () => {
  const bridged = newConnection();
  await bridged.start();
  tiny.forgetSessions();
  tiny.hang("initialized");

  const failed = await hello(bridged).catch((error: unknown) => error);
  expect(failed).toBeInstanceOf(ServerUnavailable);
  expect((failed as Error).message).toMatch(
    /lost its session and could not start a new one \(it did not finish starting within startup_timeout_seconds \(0\.5 s\)\) and is restarting/,
  );

  tiny.hang(undefined);
  await expect
    .poll(() => hello(bridged).then((result) => result.content, describe), { timeout: 5000 })
    .toEqual([{ type: "text", text: "hello from hello" }]);
  // the first session, the one that stalled (ended), and the restarted one
  expect(tiny.sessions).toHaveLength(3);
  expect(tiny.deletes).toEqual([tiny.sessions[1]]);
});
