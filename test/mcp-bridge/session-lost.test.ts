import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import {
  ConnectionLost,
  describe,
  McpConnection,
  type McpTool,
  ServerUnavailable,
} from "../../services/mcp-bridge/connection.js";
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

async function connected(onTools?: (tools: McpTool[]) => void): Promise<McpConnection> {
  connection = new McpConnection(tinyServerConfig(tiny.url), {
    logger: pino({ level: "silent" }),
    restart: { initialMs: 200, maxMs: 1000 },
    startupTimeoutMs: 5000,
    ...(onTools && { onTools }),
  });
  await connection.start();
  return connection;
}

const hello = (to: McpConnection) =>
  to.call("hello", {}, { signal: AbortSignal.timeout(10_000), onProgress: () => undefined });

const HELLO = [{ type: "text", text: "hello from hello" }];

it("restarts, with the backoff, a session the server would not give again, saying why meanwhile, then follows its tool changes", async () => {
  const listed: string[][] = [];
  const bridged = await connected((tools) => listed.push(tools.map((tool) => tool.name)));
  tiny.forgetSessions();
  tiny.refuseSessions(502);

  const failed = await hello(bridged).catch((error: unknown) => error);
  expect(failed).toBeInstanceOf(ServerUnavailable);
  expect((failed as Error).message).toMatch(
    /lost its session and could not start a new one \(.+\) and is restarting/,
  );
  const later = await hello(bridged).catch((error: unknown) => error);
  expect(later).toBeInstanceOf(ServerUnavailable);
  expect((later as Error).message).toMatch(/restarting/);
  expect((later as Error).message).not.toContain("undefined");

  tiny.refuseSessions(undefined);
  await expect
    .poll(() => hello(bridged).then((result) => result.content, describe), { timeout: 10_000 })
    .toEqual(HELLO);
  await tiny.addTool({ name: "late", description: "Came later.", inputSchema: { type: "object" } });
  await expect.poll(() => listed.at(-1)).toContain("late");
});

it("starts one new session for calls that find the old one gone together, and leaves no other open", async () => {
  const bridged = await connected();
  tiny.forgetSessions();
  const results = await Promise.all([hello(bridged), hello(bridged), hello(bridged)]);
  expect(results.map((result) => result.content)).toEqual([HELLO, HELLO, HELLO]);
  expect(tiny.sessions).toHaveLength(2);
  await expect.poll(() => tiny.openStreams()).toBe(1);
});

it("has a call that comes while a new session starts wait for it", async () => {
  const bridged = await connected();
  tiny.forgetSessions();
  tiny.delaySessions(1000);
  const first = hello(bridged);
  // the first call has found the session gone by now: a new one is on its way
  await new Promise((resolve) => setTimeout(resolve, 200));
  const second = hello(bridged);
  expect((await first).content).toEqual(HELLO);
  expect((await second).content).toEqual(HELLO);
  expect(tiny.sessions).toHaveLength(2);
});

it("stops a new session being started when it closes, and the forgotten one with its calls still out, leaving nothing open", async () => {
  tiny.answerWithJson();
  const bridged = await connected();
  const waiting = bridged
    .call("wait", {}, { signal: AbortSignal.timeout(10_000), onProgress: () => undefined })
    .catch((error: unknown) => error);
  // the session's event stream and the call's POST, which the server took before it forgot the session
  await expect.poll(() => tiny.openRequests()).toBe(2);
  tiny.forgetSessions();
  tiny.hang("initialize");
  const meanwhile = hello(bridged).catch((error: unknown) => error);
  // and the new session's initialize, which the server does not answer
  await expect.poll(() => tiny.openRequests()).toBe(3);

  const began = Date.now();
  await bridged.close();
  // the forgotten session's call ends as lost at once, not once its answer or the start's time has come
  expect(await waiting).toBeInstanceOf(ConnectionLost);
  expect(await meanwhile).toBeInstanceOf(ServerUnavailable);
  expect(Date.now() - began).toBeLessThan(1000);
  await expect.poll(() => tiny.openRequests(), { timeout: 1000 }).toBe(0);
  expect(tiny.sessions).toHaveLength(1);
});
