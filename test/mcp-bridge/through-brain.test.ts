import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestBrain } from "../helpers/brain.js";
import { runTurn } from "../helpers/turns.js";
import {
  type Bridge,
  EVERYTHING,
  FILESYSTEM,
  fromEnv,
  STDIN_TAP,
  sessionCalling,
  startBrainFor,
  startBridge,
  startEverythingOverHttp,
  turnActing,
} from "./bridge-process.js";

let web: Awaited<ReturnType<typeof startEverythingOverHttp>>;
let bridge: Bridge;
let brain: TestBrain;
let tapLog: string;
let allowed: string;
const WEB_TOKEN = `web-token-${Date.now()}`;

beforeAll(async () => {
  web = await startEverythingOverHttp();
  bridge = await startBridge(
    {
      everything: {
        command: process.execPath,
        args: [STDIN_TAP, "stdin.log", process.execPath, EVERYTHING, "stdio"],
      },
      files: { command: process.execPath, args: [FILESYSTEM, "allowed"] },
      web: { url: web.url, headers: { Authorization: `Bearer ${fromEnv("WEB_TOKEN")}` } },
    },
    {
      env: { WEB_TOKEN },
      prepare: (dir) => {
        mkdirSync(join(dir, "allowed"));
        writeFileSync(join(dir, "allowed", "note.txt"), "remember the milk");
      },
    },
  );
  tapLog = join(bridge.dir, "stdin.log");
  allowed = join(bridge.dir, "allowed");
  brain = await startBrainFor(bridge);
}, 60_000);
afterAll(async () => {
  await brain?.stop();
  await bridge?.stop();
  await web?.stop();
});

/** One turn of a session that calls `tool` once with `args`; its tool.result's data. */
async function callThroughBrain(tool: string, args: Record<string, unknown>) {
  const client = brain.client();
  const session = await sessionCalling(client, tool, args);
  const events = await runTurn(client, session.id, "go");
  expect(events.at(-1)?.type).toBe("turn.completed");
  return events.find((event) => event.type === "tool.result")?.data;
}

it("echoes through a stdio server and a Streamable HTTP one", async () => {
  expect(await callThroughBrain("everything_echo", { message: "hello" })).toEqual(
    expect.objectContaining({ is_error: false, content: [{ type: "text", text: "Echo: hello" }] }),
  );
  expect(await callThroughBrain("web_echo", { message: "over http" })).toEqual(
    expect.objectContaining({ is_error: false, content: [{ type: "text", text: "Echo: over http" }] }),
  );
});

it("forwards progress live, and an interrupt reaches the server as notifications/cancelled", async () => {
  const client = brain.client();
  const session = await sessionCalling(client, "everything_trigger-long-running-operation", {
    duration: 30,
    steps: 60,
  });
  const events = await turnActing(client, session.id, (count) => count === 2 && client.interrupt(session.id));
  const progress = events.filter((event) => event.type === "tool.progress").map((event) => event.data.data);
  expect(progress).toEqual([
    { progress: 1, total: 60 },
    { progress: 2, total: 60 },
  ]);
  expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
    is_error: true,
    error: { code: "cancelled" },
  });
  const received = () =>
    readFileSync(tapLog, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id?: number; method?: string; params?: Record<string, unknown> });
  const call = received().find(
    (message) => message.method === "tools/call" && message.params?.name === "trigger-long-running-operation",
  );
  expect(call?.id).toBeDefined();
  await expect
    .poll(() => received().find((message) => message.method === "notifications/cancelled")?.params)
    .toMatchObject({ requestId: call?.id });
});

it("passes an image on as an image item", async () => {
  const result = await callThroughBrain("everything_get-tiny-image", {});
  expect(result).toMatchObject({
    is_error: false,
    content: [
      { type: "text", text: "Here's the image you requested:" },
      { type: "image", mime_type: "image/png", data: expect.stringMatching(/^iVBORw0KGgo/) },
      { type: "text", text: "The image above is the MCP logo." },
    ],
  });
});

it("passes structured content on, checked by Brain against the tool's output schema", async () => {
  const catalog = await brain.client().catalog();
  const binding = catalog.tools.find((tool) => tool.name === "everything_get-structured-content");
  expect(binding?.output_schema).toMatchObject({
    type: "object",
    required: ["temperature", "conditions", "humidity"],
  });
  const result = await callThroughBrain("everything_get-structured-content", { location: "Chicago" });
  expect(result).toMatchObject({
    is_error: false,
    structured_content: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
  });
});

it("reads a file in the allowed folder, and refuses one outside it with an error result the server chose", async () => {
  expect(await callThroughBrain("files_read_text_file", { path: join(allowed, "note.txt") })).toMatchObject({
    is_error: false,
    content: [{ type: "text", text: "remember the milk" }],
  });
  const outside = await callThroughBrain("files_read_text_file", { path: "/etc/hostname" });
  expect(outside).toMatchObject({
    is_error: true,
    content: [{ type: "text", text: expect.stringMatching(/access denied/i) }],
  });
  expect(outside).not.toHaveProperty("unknown_outcome");
  expect(outside).not.toHaveProperty("error");
});

it("keeps the bridge's token and the servers' keys out of logs and out of the servers' environment", async () => {
  const env = await callThroughBrain("everything_get-env", {});
  expect(JSON.stringify(env)).toContain("PATH");
  expect(JSON.stringify(env)).not.toContain(bridge.token);
  for (const log of [brain.logs(), bridge.logs()]) {
    expect(log).not.toContain(bridge.token);
    expect(log).not.toContain(WEB_TOKEN);
  }
});
