import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { SqliteStore } from "../../src/store/sqlite.js";
import type { AppendOptions, AppendResult } from "../../src/store/store.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { startBrainProcess } from "../helpers/brain-process.js";
import { metricSample } from "../helpers/metrics.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { runTurn, waitForEvents } from "../helpers/turns.js";

/** A sample's value on the Brain's /metrics now; a label set never counted reads 0, as in Prometheus. */
async function sample(brain: TestBrain, series: string): Promise<number> {
  return (await metricSample(brain, series)) ?? 0;
}

/** How many turns /metrics counts by end, in brain_turns_total and in the duration histogram. */
async function turnEnds(brain: TestBrain) {
  const ends = ["completed", "interrupted", "failed", "crashed", "left_waiting"] as const;
  const counted: Record<string, [number, number]> = {};
  for (const end of ends) {
    counted[end] = [
      await sample(brain, `brain_turns_total{end="${end}"}`),
      await sample(brain, `brain_turn_duration_seconds_count{end="${end}"}`),
    ];
  }
  return counted;
}

const NONE: [number, number] = [0, 0];
const ONCE: [number, number] = [1, 1];

/**
 * The real SQLite store, refusing the first write of a tool result as a full disk would: the
 * turn that made the call crashes, and its end is written by the crash's own path.
 */
class FullOnFirstResult extends SqliteStore {
  #refused = false;

  override async append(
    sessionId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    if (!this.#refused && events.some((event) => event.type === "tool.result")) {
      this.#refused = true;
      throw new Error("database or disk is full");
    }
    return super.append(sessionId, events, options);
  }
}

let service: ToolService;
const brains: TestBrain[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  service = await startToolService({
    "/echo": (_call, res) => sendJson(res, textResult("echoed")),
    // never answers: the call is out when its Brain dies
    "/hang": () => {},
  });
});

afterEach(async () => {
  for (const brain of brains.splice(0)) await brain.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await service?.close();
});

const binding = (name: string) => service.binding(name);

/** A SQLite file for Brains that run on it one after the other, removed after the test. */
function sharedStore(): { kind: "sqlite"; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "turn-end-metrics-"));
  dirs.push(dir);
  return { kind: "sqlite", path: join(dir, "brain.db") };
}

async function started(...args: Parameters<typeof startBrain>): Promise<TestBrain> {
  const brain = await startBrain(...args);
  brains.push(brain);
  return brain;
}

/** A session whose turn makes one echo call, then answers. */
const ONE_ECHO_CALL = {
  tools: ["echo"],
  script: [{ tool_calls: [{ name: "echo", arguments: {} }] }, { text: "done" }],
};

describe("brain_turns_total and brain_turn_duration_seconds count each turn's end once", () => {
  it("counts a completed turn under completed", async () => {
    const brain = await started({ tools: [binding("echo")] });
    const client = brain.client();
    const session = await client.createSession(ONE_ECHO_CALL);
    expect((await runTurn(client, session.id, "go")).at(-1)?.type).toBe("turn.completed");
    expect(await turnEnds(brain)).toEqual({
      completed: ONCE,
      interrupted: NONE,
      failed: NONE,
      crashed: NONE,
      left_waiting: NONE,
    });
  });

  it("counts a turn whose session names a model the host config no longer has under failed", async () => {
    const store = sharedStore();
    const before = await startBrain({
      store,
      models: [
        { name: "default", provider: "scripted" },
        { name: "retired", provider: "scripted" },
      ],
    });
    const session = await before.client().createSession({ model: "retired" });
    await before.stop();
    const brain = await started({ store });

    const events = await runTurn(brain.client(), session.id, "go");
    expect(events.at(-1)).toMatchObject({ type: "turn.failed", data: { error: { code: "unknown_model" } } });
    expect((await turnEnds(brain)).failed).toEqual(ONCE);
  });

  it("counts a turn whose store refused a write under crashed, and not again under failed", async () => {
    const brain = await started(
      { tools: [binding("echo")] },
      { start: { openStore: (path) => new FullOnFirstResult(path) } },
    );
    const client = brain.client();
    const session = await client.createSession(ONE_ECHO_CALL);
    const events = await runTurn(client, session.id, "go");
    expect(events.at(-1)).toMatchObject({ type: "turn.failed", data: { error: { code: "internal_error" } } });
    expect(await turnEnds(brain)).toEqual({
      completed: NONE,
      interrupted: NONE,
      failed: NONE,
      crashed: ONCE,
      left_waiting: NONE,
    });
  });

  it("counts a turn stranded by kill -9 once, under failed, on the Brain that ended it, from its start", async () => {
    const store = sharedStore();
    const killed = await startBrainProcess({ store, tools: [binding("hang")] });
    const session = await killed.client().createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "never" }],
    });
    const sent = Date.now();
    await killed.client().sendMessage(session.id, "go");
    await waitForEvents(killed.client(), session.id, (all) => all.some((e) => e.type === "tool.call"));
    // long enough that the turn's time is told apart from the moments the next Brain takes to end it
    await new Promise((resolve) => setTimeout(resolve, 500));
    await killed.kill();
    await killed.stop();

    const brain = await started({ store });
    const ended = await waitForEvents(
      brain.client(),
      session.id,
      (all) => all.at(-1)?.type === "turn.failed",
    );
    expect(ended.at(-1)).toMatchObject({ data: { error: { code: "brain_restarted" } } });
    expect(await turnEnds(brain)).toEqual({
      completed: NONE,
      interrupted: NONE,
      failed: ONCE,
      crashed: NONE,
      left_waiting: NONE,
    });
    const seconds = await sample(brain, 'brain_turn_duration_seconds_sum{end="failed"}');
    expect(seconds).toBeGreaterThanOrEqual(0.5);
    expect(seconds).toBeLessThanOrEqual((Date.now() - sent) / 1000);
  });
});
