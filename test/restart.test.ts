import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore, StoreInUseError } from "../src/store/sqlite.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { startBrainProcess } from "./helpers/brain-process.js";
import { startToolService, type ToolService } from "./helpers/tool-service.js";
import { assertGapless, runTurn, storedOnly, waitForEvents } from "./helpers/turns.js";

let service: ToolService;

beforeAll(async () => {
  service = await startToolService({
    // never answers: the call is out when Brain dies
    "/hang": () => {},
  });
});
afterAll(async () => {
  await service?.close();
});

describe("the SQLite event log", () => {
  let brain: TestBrain;
  afterAll(async () => brain?.stop());

  it("keeps every event and session across a restart on the same file", async () => {
    brain = await startBrain();
    const client = brain.client();
    const session = await client.createSession({ metadata: { owner: "test" } });
    const live = await runTurn(client, session.id, "before restart");
    const before = await client.events(session.id);
    expect(before).toEqual([expect.objectContaining({ seq: 1 }), ...storedOnly(live)]);
    // model.delta is live only: seen on the stream, never stored
    expect(live.some((e) => e.type === "model.delta")).toBe(true);
    expect(before.some((e) => (e.type as string) === "model.delta")).toBe(false);

    const sessionBefore = await client.getSession(session.id);
    await brain.restart();
    const after = brain.client();
    expect(await after.events(session.id)).toEqual(before);
    expect(await after.getSession(session.id)).toEqual(sessionBefore);
    await runTurn(after, session.id, "after restart");
    const all = await after.events(session.id);
    assertGapless(all);
    expect(all.length).toBe(before.length + 4);
  });

  it("belongs to one Brain: a second one on the same file is refused while the first runs", async () => {
    const path = brain.dbPath;
    const second = startBrain({ store: { kind: "sqlite", path } });
    await expect(second).rejects.toBeInstanceOf(StoreInUseError);
    await expect(second).rejects.toThrow(/in use by another process/);
    // the first one is unharmed
    expect((await brain.client().createSession()).status).toBe("idle");
  });

  it("is a WAL-mode SQLite file that others can open once Brain has closed it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-wal-"));
    const path = join(dir, "brain.db");
    await new SqliteStore(path).close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The built `brain` in its own process, with one tool that never answers. */
const startWithHangingTool = () =>
  startBrainProcess({
    tools: [
      {
        name: "hang",
        description: "Never answers.",
        input_schema: { type: "object" },
        url: service.at("/hang"),
        tenants: ["acme"],
      },
    ],
  });

/** Resolves once the service has read `count` more requests than `before`. */
async function untilReceived(before: number, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (service.calls.length < before + count && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 5));
  expect(service.calls.length).toBe(before + count);
}

describe("a Brain stopped with SIGTERM during a tool call", () => {
  it("closes the call's connection, records it cancelled and the turn interrupted, before it exits", async () => {
    const brain = await startWithHangingTool();
    try {
      const session = await brain.client().createSession({
        tools: ["hang"],
        script: [{ tool_calls: [{ name: "hang", arguments: {} }] }],
      });
      const before = service.calls.length;
      await brain.client().sendMessage(session.id, "go");
      await untilReceived(before, 1);
      expect(await brain.terminate()).toBe(0);
      await service.calls.at(-1)?.closed;

      await brain.start();
      const events = await brain.client().events(session.id);
      expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
        error: { code: "cancelled" },
      });
      expect(events.at(-1)).toMatchObject({ type: "turn.interrupted", data: { reason: "shutdown" } });
      expect(brain.output()).not.toContain("recovered a turn");
    } finally {
      await brain.stop();
    }
  });
});

describe("a Brain killed with SIGKILL during a tool call", () => {
  it("answers the unanswered call with brain_restarted on restart, fails the turn, and takes messages again", async () => {
    const script = [
      {
        tool_calls: [
          { name: "hang", arguments: {} },
          { name: "hang", arguments: { n: 2 } },
        ],
      },
      { text: "unreachable" },
    ];
    const brain = await startWithHangingTool();
    let client = brain.client();
    const session = await client.createSession({ tools: ["hang"], script });
    const before = service.calls.length;
    await client.sendMessage(session.id, "go");
    // both requests have reached the service (bodies read), so any later arrival would be a resend
    await untilReceived(before, 2);
    const callsOut = service.calls.length;
    await brain.kill();

    await brain.start();
    try {
      client = brain.client();
      const events = await client.events(session.id);
      assertGapless(events);
      const calls = events.filter((e) => e.type === "tool.call");
      const results = events.filter((e) => e.type === "tool.result");
      expect(results.map((e) => e.data.call_id).sort()).toEqual(calls.map((e) => e.data.call_id).sort());
      for (const result of results) {
        expect(result.data).toMatchObject({
          is_error: true,
          unknown_outcome: true,
          error: { code: "brain_restarted" },
        });
      }
      expect(events.at(-1)).toMatchObject({
        type: "turn.failed",
        data: { error: { code: "brain_restarted" } },
      });
      // no call was sent again on restart
      expect(service.calls.length).toBe(callsOut);
      expect((await client.getSession(session.id)).status).toBe("idle");
      await client.sendMessage(session.id, "again");
      const next = await waitForEvents(client, session.id, (all) => all.at(-1)?.type === "turn.completed");
      expect(next.at(-2)).toMatchObject({ type: "message.assistant", data: { text: "unreachable" } });
    } finally {
      await brain.stop();
    }
  });
});
