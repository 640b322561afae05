import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { TestBrain } from "../helpers/brain.js";
import { processAlive } from "../helpers/processes.js";
import { runTurn } from "../helpers/turns.js";
import {
  type Bridge,
  EVERYTHING,
  sessionCalling,
  startBrainFor,
  startBridge,
  TWICE,
  turnActing,
} from "./bridge-process.js";

let bridge: Bridge | undefined;
let brain: TestBrain | undefined;

afterEach(async () => {
  await brain?.stop();
  await bridge?.stop();
  brain = undefined;
  bridge = undefined;
});

const everything = (extra: Record<string, unknown> = {}) => ({
  everything: { command: process.execPath, args: [EVERYTHING, "stdio"], ...extra },
});

const pids = (started: Bridge) => started.logged("mcp server connected").map((entry) => entry.pid as number);

async function call(started: TestBrain, tool: string, args: Record<string, unknown>) {
  const client = started.client();
  const session = await sessionCalling(client, tool, args);
  const events = await runTurn(client, session.id, "go");
  return events.find((event) => event.type === "tool.result")?.data;
}

const echo = (started: TestBrain, message: string) => call(started, "everything_echo", { message });

it("ends a call whose server died as a lost connection, refuses calls while it restarts, then serves again", async () => {
  bridge = await startBridge(everything(), { config: { restart: { initial_seconds: 2, max_seconds: 4 } } });
  brain = await startBrainFor(bridge);
  const [first] = pids(bridge);
  const client = brain.client();
  const session = await sessionCalling(client, "everything_trigger-long-running-operation", {
    duration: 30,
    steps: 30,
  });
  const events = await turnActing(
    client,
    session.id,
    (count) => count === 1 && process.kill(first as number, "SIGKILL"),
  );
  expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
    is_error: true,
    unknown_outcome: true,
    error: { code: "connection_lost" },
  });
  expect(events.at(-1)?.type).toBe("turn.completed");

  const meanwhile = await echo(brain, "too soon");
  expect(meanwhile).toMatchObject({
    is_error: true,
    content: [{ type: "text", text: expect.stringMatching(/restarting/) }],
  });
  expect(meanwhile).not.toHaveProperty("unknown_outcome");

  await expect.poll(() => pids(bridge as Bridge).length, { timeout: 10_000 }).toBe(2);
  expect(pids(bridge)[1]).not.toBe(first);
  expect(await echo(brain, "back")).toMatchObject({
    is_error: false,
    content: [{ type: "text", text: "Echo: back" }],
  });
});

it("gives each session a server of its own, and stops it once idle", async () => {
  bridge = await startBridge(everything({ isolation: "session", idle_seconds: 0.5 }));
  brain = await startBrainFor(bridge);
  expect(await echo(brain, "one")).toMatchObject({ is_error: false });
  expect(await echo(brain, "two")).toMatchObject({ is_error: false });
  // the one that lists the tools, and one for each session; the log reaches this process through a pipe
  await expect.poll(() => pids(bridge as Bridge).length).toBe(3);
  const [lister, ...sessions] = pids(bridge);
  expect(new Set(sessions).size).toBe(2);
  expect(sessions).not.toContain(lister);
  const started = bridge.logged("starting an isolated mcp server");
  expect(new Set(started.map((entry) => entry.session_id)).size).toBe(2);
  await expect
    .poll(() => (bridge as Bridge).logged("stopping an isolated mcp server").length, { timeout: 10_000 })
    .toBe(2);
  await expect.poll(() => sessions.filter(processAlive), { timeout: 10_000 }).toEqual([]);
  expect(processAlive(lister as number)).toBe(true);
});

it("refuses a restarted server that lists a tool twice, saying so, and leaves none of its processes running", async () => {
  bridge = await startBridge({ twice: { command: process.execPath, args: [TWICE] } });
  brain = await startBrainFor(bridge);
  const dir = bridge.dir;
  const started = () => readFileSync(join(dir, "pids"), "utf8").trim().split("\n").map(Number);
  process.kill(started()[0] as number, "SIGKILL");

  await expect
    .poll(() => (bridge as Bridge).logged("mcp server restart failed").length, { timeout: 10_000 })
    .toBeGreaterThan(0);
  expect(bridge.logged("mcp server restart failed")[0]?.err).toMatch(/it lists the tool "same" twice/);
  expect(await call(brain, "twice_same", {})).toMatchObject({
    is_error: true,
    content: [
      {
        type: "text",
        text: expect.stringMatching(/failed to restart \(it lists the tool "same" twice\) and is restarting/),
      },
    ],
  });
  const restarted = started().slice(1);
  expect(restarted.length).toBeGreaterThan(0);
  await expect.poll(() => restarted.filter(processAlive), { timeout: 10_000 }).toEqual([]);
});
