import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/client/client.js";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { assertGapless, runTurn, waitForEvents } from "../helpers/turns.js";

const BUSY = 10;
const HANGING = 10;
const IDLE = 4;
/** Tool steps of a busy session's turn: it is somewhere in the middle of them when Brain dies. */
const BUSY_STEPS = 60;

let service: ToolService;
let brain: BrainProcess;

beforeAll(async () => {
  service = await startToolService({
    "/slow": (call, res) => {
      setTimeout(() => sendJson(res, textResult(String(call.body.call_id))), 15);
    },
    // never answers: the call is out when Brain dies
    "/hang": () => {},
  });
  const binding = (name: string, path: string) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: service.at(path),
    tenants: ["acme"],
  });
  brain = await startBrainProcess({
    tools: [binding("slow", "/slow"), binding("hang", "/hang")],
    limits: { max_steps_per_turn: 1000 },
  });
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

const slowStep = { tool_calls: [{ name: "slow", arguments: {} }] };
const SCRIPTS = {
  busy: [...Array(BUSY_STEPS).fill(slowStep), { text: "busy done" }],
  hanging: [
    {
      tool_calls: [
        { name: "hang", arguments: { n: 1 } },
        { name: "hang", arguments: { n: 2 } },
        { name: "slow", arguments: {} },
      ],
    },
    { text: "after the crash" },
  ],
  idle: [slowStep, { text: "first turn" }, { text: "after the crash" }],
};

const countType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).length;

describe("Brain killed with SIGKILL in the middle of many sessions' tool calls", () => {
  it("keeps every stored event, answers every unanswered call with brain_restarted, and takes messages again", async () => {
    const client = brain.client();
    const sessions: { id: string; kind: keyof typeof SCRIPTS }[] = [];
    for (const [kind, count] of [
      ["busy", BUSY],
      ["hanging", HANGING],
      ["idle", IDLE],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const { id } = await client.createSession({ tools: ["slow", "hang"], script: SCRIPTS[kind] });
        sessions.push({ id, kind });
      }
    }
    await Promise.all(sessions.filter((s) => s.kind === "idle").map((s) => runTurn(client, s.id, "first")));
    await Promise.all(sessions.filter((s) => s.kind !== "idle").map((s) => client.sendMessage(s.id, "go")));
    await Promise.all(
      sessions.map((s) =>
        waitForEvents(client, s.id, (events) =>
          s.kind === "busy"
            ? countType(events, "tool.result") >= 10
            : s.kind === "hanging"
              ? countType(events, "tool.call") === 3
              : true,
        ),
      ),
    );
    // what clients could read before the crash; busy sessions go on writing until the kill
    const before = new Map<string, StoredEvent[]>();
    for (const s of sessions) before.set(s.id, await client.events(s.id, { limit: 10_000 }));
    await brain.kill();

    await brain.start();
    const after = brain.client();
    // one Brain on its own file ends what it left at start; among instances, a dead owner's turns are
    // taken over once its leases run out
    await expect
      .poll(async () => Promise.all(sessions.map(async (s) => (await after.getSession(s.id)).status)), {
        timeout: 10_000,
      })
      .not.toContain("running");
    for (const s of sessions) {
      const events = await after.events(s.id, { limit: 10_000 });
      const where = `${s.kind} session ${s.id}`;
      assertGapless(events);
      const seen = before.get(s.id) ?? [];
      expect(events.slice(0, seen.length), `${where}: every stored event is still there`).toEqual(seen);

      const calls = events.filter((e) => e.type === "tool.call").map((e) => String(e.data.call_id));
      const results = events.filter((e) => e.type === "tool.result");
      expect(results.map((e) => String(e.data.call_id)).sort(), where).toEqual([...calls].sort());
      // the results Brain made on restart come together at the end, then the failed turn
      const restarted = results.filter(
        (e) => (e.data.error as { code?: string })?.code === "brain_restarted",
      );
      for (const result of restarted) {
        expect(result.data, where).toMatchObject({ is_error: true, unknown_outcome: true });
      }
      if (s.kind === "idle") {
        expect(restarted, where).toHaveLength(0);
        continue;
      }
      const tail = events.slice(-(restarted.length + 1));
      expect(
        tail.map((e) => e.type),
        where,
      ).toEqual([...restarted.map(() => "tool.result"), "turn.failed"]);
      expect(events.at(-1)?.data, where).toMatchObject({ error: { code: "brain_restarted" } });
      if (s.kind === "hanging") {
        const hangs = results.filter((e) => e.data.name === "hang");
        expect(
          hangs.map((e) => (e.data.error as { code: string }).code),
          where,
        ).toEqual(["brain_restarted", "brain_restarted"]);
      }
    }
    // recovery sent nothing again: every call reached the service at most once (a count taken at the
    // kill would race with the service still reading bodies Brain had sent)
    const ids = service.calls.map((call) => call.body.call_id);
    expect(new Set(ids).size).toBe(ids.length);

    // and every session takes a message again, its turn running to the end
    await Promise.all(
      sessions.map(async (s) => {
        const events = await runTurn(after, s.id, "again", 20_000);
        expect(events.at(-1)?.type, `${s.kind} session ${s.id}`).toBe("turn.completed");
      }),
    );
  }, 60_000);
});
