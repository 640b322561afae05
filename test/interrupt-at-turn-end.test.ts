import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { overridden } from "./helpers/overridden-store.js";
import { ofType, waitForEvents } from "./helpers/turns.js";

// A store whose write of a turn's end that starts the next queued turn, once `holdEnds` is set,
// commits and then holds its answer until the test lets it go: an interrupt can come while that
// write is out.
let holdEnds = false;
let endHeld: () => void = () => {};
let letEndGo: () => void = () => {};
function heldEnds(store: SqliteStore): SqliteStore {
  return overridden(store, {
    append: (own) => async (sessionId, events, options) => {
      const result = await own(sessionId, events, options);
      const types = events.map((event) => event.type);
      if (holdEnds && result.ok && types.includes("turn.completed") && types.includes("turn.started")) {
        holdEnds = false;
        const going = new Promise<void>((resolve) => {
          letEndGo = resolve;
        });
        endHeld();
        await going;
      }
      return result;
    },
  });
}

let brain: TestBrain;

beforeAll(async () => {
  brain = await startBrain({}, { start: { openStore: (path) => heldEnds(new SqliteStore(path)) } });
});
afterAll(async () => brain?.stop());

describe("an interrupt that comes while a turn's end is written", () => {
  it("ends that turn, and the queued turn its end started runs to its answer", async () => {
    const client = brain.client();
    const session = await client.createSession({
      script: [
        { delay_ms: 300, text: "answer to {{message}}" },
        { delay_ms: 300, text: "answer to {{message}}" },
      ],
    });
    const held = new Promise<void>((resolve) => {
      endHeld = resolve;
    });
    holdEnds = true;
    await client.sendMessage(session.id, "first");
    expect(await client.sendMessage(session.id, "second", { onBusy: "enqueue" })).toEqual({ queued: 1 });
    await held;
    // the end of the first turn, and the start of the second, are written; the interrupt comes now
    const interrupt = client.interrupt(session.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    letEndGo();
    await interrupt;

    const events = await waitForEvents(
      client,
      session.id,
      (all) => ofType(all, "message.assistant").length === 2 || all.at(-1)?.type === "turn.interrupted",
    );
    expect(events.map((event) => event.type).slice(-6)).toEqual([
      "message.assistant",
      "turn.completed",
      "message.user",
      "turn.started",
      "message.assistant",
      "turn.completed",
    ]);
    expect(ofType(events, "message.assistant").map((event) => event.data.text)).toEqual([
      "answer to first",
      "answer to second",
    ]);
    expect((await client.getSession(session.id)).status).toBe("idle");
  });
});
