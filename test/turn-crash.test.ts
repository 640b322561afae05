import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent } from "../protocol/events.js";
import { SqliteStore } from "../src/store/sqlite.js";
import type { AppendOptions, AppendResult } from "../src/store/store.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { assertGapless, runTurn, storedOnly } from "./helpers/turns.js";

/**
 * The real SQLite store, refusing the appends it is told to as a full disk would: the fault is
 * in the store, the thing under test is how a turn ends when its store fails under it.
 */
class FailingStore extends SqliteStore {
  refuse: ((events: readonly NewEvent[]) => boolean) | undefined;
  readonly refused: NewEvent[][] = [];
  #onRefused: (() => void)[] = [];

  override async append(
    sessionId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    if (this.refuse?.(events)) {
      this.refused.push([...events]);
      for (const wake of this.#onRefused.splice(0)) wake();
      throw new Error("database or disk is full");
    }
    return super.append(sessionId, events, options);
  }

  nextRefusal(): Promise<void> {
    return new Promise((resolve) => this.#onRefused.push(resolve));
  }
}

let store: FailingStore;
let service: ToolService;
let brain: TestBrain;
let refusalSeen: Promise<void>;

const anyObject = { type: "object" };

beforeAll(async () => {
  service = await startToolService({
    "/fast": (_call, res) => sendJson(res, textResult("fast done")),
    // still out when the fast call's result is refused, so the turn must wait for it
    "/slow": async (_call, res) => {
      await refusalSeen;
      sendJson(res, textResult("slow done"));
    },
  });
  brain = await startBrain(
    {
      tools: ["fast", "slow"].map((name) => ({
        name,
        description: name,
        input_schema: anyObject,
        url: service.at(`/${name}`),
        tenants: ["acme"],
      })),
    },
    {
      start: {
        openStore: (path) => {
          store = new FailingStore(path);
          return store;
        },
      },
    },
  );
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

const isResultOf = (name: string) => (events: readonly NewEvent[]) =>
  events.some((event) => event.type === "tool.result" && (event.data as { name?: string }).name === name);

describe("a turn whose store refuses a write", () => {
  it("ends failed with one result per call, and the session takes the next message at once", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["fast", "slow"],
      script: [
        {
          tool_calls: [
            { name: "fast", arguments: {} },
            { name: "slow", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    });
    let refusals = 0;
    store.refuse = (events) => isResultOf("fast")(events) && refusals++ === 0;
    refusalSeen = store.nextRefusal();

    const events = await runTurn(client, session.id, "go");
    expect(events.at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "internal_error" } },
    });
    expect(store.refused).toHaveLength(1);

    const stored = await client.events(session.id);
    assertGapless(stored);
    // a client saw only what was committed: the refused result never reached the stream
    const bySeq = new Map(stored.map((event) => [event.seq, event]));
    for (const seen of storedOnly(events)) expect(seen).toEqual(bySeq.get(seen.seq));
    expect(JSON.stringify(events)).not.toContain("fast done");
    const calls = stored.filter((e) => e.type === "tool.call").map((e) => e.data);
    const results = stored.filter((e) => e.type === "tool.result").map((e) => e.data);
    expect(results).toHaveLength(calls.length);
    for (const call of calls) {
      expect(results.filter((r) => r.call_id === call.call_id)).toHaveLength(1);
    }
    // the slow call ran to its end and kept its own result; the refused one is an unknown outcome
    expect(results.find((r) => r.name === "slow")).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "slow done" }],
    });
    expect(results.find((r) => r.name === "fast")).toMatchObject({
      is_error: true,
      unknown_outcome: true,
      error: { code: "brain_restarted" },
    });
    await expect.poll(() => brain.logs()).toContain("database or disk is full");

    expect((await client.getSession(session.id)).status).toBe("idle");
    const next = await runTurn(client, session.id, "again");
    expect(next.at(-1)).toMatchObject({ type: "turn.completed" });
  });

  it("leaves the session to the next start when the store keeps refusing", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["fast"],
      script: [{ tool_calls: [{ name: "fast", arguments: {} }] }, { text: "done" }],
    });
    // the fast result and every write after it, until the store is healthy again
    let failing = false;
    store.refuse = (events) => {
      failing ||= isResultOf("fast")(events);
      return failing;
    };
    const refused = store.nextRefusal();
    await client.sendMessage(session.id, "go");
    await refused;
    await expect.poll(() => brain.logs()).toContain("the next stop or start of Brain will");
    expect((await client.getSession(session.id)).status).toBe("running");

    store.refuse = undefined;
    await brain.restart();
    const stored = await brain.client().events(session.id);
    assertGapless(stored);
    expect(stored.at(-1)).toMatchObject({
      type: "turn.failed",
      data: { error: { code: "brain_restarted" } },
    });
    expect(stored.filter((e) => e.type === "tool.result")).toHaveLength(1);
  });
});
