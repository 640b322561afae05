import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestBrain } from "../helpers/brain.js";
import { runTurn } from "../helpers/turns.js";
import {
  type Bridge,
  fromEnv,
  manifestOf,
  sessionCalling,
  startBrainFor,
  startBridge,
} from "./bridge-process.js";
import { startTinyMcpServer, type TinyMcpServer } from "./tiny-mcp-server.js";

let tiny: TinyMcpServer;
let bridge: Bridge;
let brain: TestBrain;
const TINY_TOKEN = `tiny-${Date.now()}`;

beforeAll(async () => {
  tiny = await startTinyMcpServer();
  bridge = await startBridge(
    { tiny: { url: tiny.url, headers: { Authorization: `Bearer ${fromEnv("TINY_TOKEN")}` } } },
    { env: { TINY_TOKEN } },
  );
  brain = await startBrainFor(bridge);
});
afterAll(async () => {
  await brain?.stop();
  await bridge?.stop();
  await tiny?.close();
});

async function call(tool: string) {
  const client = brain.client();
  const session = await sessionCalling(client, tool, {});
  const events = await runTurn(client, session.id, "go");
  return events.find((event) => event.type === "tool.result")?.data;
}

it("sends the configured headers, their values from the bridge's environment, with every request", () => {
  expect(tiny.authorizations.length).toBeGreaterThan(0);
  expect(new Set(tiny.authorizations)).toEqual(new Set([`Bearer ${TINY_TOKEN}`]));
  expect(bridge.logs()).not.toContain(TINY_TOKEN);
});

it("turns a JSON-RPC error into an error result naming it", async () => {
  const result = await call("tiny_fail");
  expect(result).toMatchObject({
    is_error: true,
    content: [
      {
        type: "text",
        text: 'The MCP server "tiny" answered fail with the JSON-RPC error -32603: database down',
      },
    ],
  });
  expect(result).not.toHaveProperty("unknown_outcome");
});

it("serves a tool the server adds, once it says its tools changed", async () => {
  await tiny.addTool({ name: "late", description: "Came later.", inputSchema: { type: "object" } });
  await expect
    .poll(async () => (await manifestOf(bridge)).tools.map((tool) => tool.name))
    .toContain("tiny_late");
});

it("starts a new session when the server forgot the old one, and the call goes through", async () => {
  tiny.forgetSessions();
  expect(await call("tiny_hello")).toMatchObject({
    is_error: false,
    content: [{ type: "text", text: "hello from hello" }],
  });
  expect(bridge.logs()).toContain("the MCP server lost the session");
});
