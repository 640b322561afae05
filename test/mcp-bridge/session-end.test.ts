import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { McpConnection } from "../../services/mcp-bridge/connection.js";
import { ServerPool } from "../../services/mcp-bridge/server-pool.js";
import { startTinyMcpServer, type TinyMcpServer, tinyServerConfig } from "./tiny-mcp-server.js";

let tiny: TinyMcpServer;
let pool: ServerPool | undefined;
const options = {
  logger: pino({ level: "silent" }),
  restart: { initialMs: 200, maxMs: 1000 },
  startupTimeoutMs: 5000,
};

beforeEach(async () => {
  tiny = await startTinyMcpServer();
});
afterEach(async () => {
  await pool?.close();
  await tiny.close();
  pool = undefined;
});

it("ends each idle isolated Streamable HTTP session with a DELETE naming it", async () => {
  pool = new ServerPool(
    tinyServerConfig(tiny.url, { isolation: "session", idleMs: 300 }),
    options,
    () => undefined,
  );
  await pool.start();
  await pool.connectionFor({ tenant_id: "acme", session_id: "one" });
  await pool.connectionFor({ tenant_id: "acme", session_id: "two" });
  expect(tiny.sessions).toHaveLength(3);
  await expect.poll(() => pool?.instances, { timeout: 5000 }).toBe(0);
  await expect.poll(() => [...tiny.deletes].sort()).toEqual(tiny.sessions.slice(1).sort());
  // the lister's session stays
  await expect.poll(() => tiny.openStreams()).toBe(1);
});

it("stops waiting for a server that never answers the DELETE, and closes anyway", async () => {
  const connection = new McpConnection(tinyServerConfig(tiny.url), options);
  await connection.start();
  tiny.hang("delete");
  const began = Date.now();
  await connection.close();
  expect(Date.now() - began).toBeLessThan(3000);
  expect(tiny.deletes).toEqual(tiny.sessions);
  await expect.poll(() => tiny.openStreams()).toBe(0);
});
