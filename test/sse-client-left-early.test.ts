import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { overridden } from "./helpers/overridden-store.js";

// A store whose session reads wait while `held` is set: what a networked database, or one that is
// down and retried, looks like to an event stream that has not opened yet.
let held: Promise<void> | undefined;
let readWaiting: () => void = () => {};
function slowReads(store: SqliteStore): SqliteStore {
  return overridden(store, {
    getSession: (own) => async (id) => {
      if (held) {
        readWaiting();
        await held;
      }
      return own(id);
    },
  });
}

let brain: TestBrain;

beforeAll(async () => {
  brain = await startBrain(
    { tenants: [{ id: "acme", api_key_env: "KEY_ACME", max_event_streams: 1 }] },
    { start: { openStore: (path) => slowReads(new SqliteStore(path)) } },
  );
});
afterAll(async () => {
  await brain?.stop();
});

describe("an event stream whose client leaves before it opens", () => {
  it("holds nothing: the tenant's one stream place is free again and no SSE client is counted", async () => {
    const client = brain.client();
    const session = await client.createSession();
    let release: () => void = () => {};
    held = new Promise((resolve) => {
      release = resolve;
    });
    const reading = new Promise<void>((resolve) => {
      readWaiting = resolve;
    });
    const leaving = new AbortController();
    const stream = request(`${brain.url}/sessions/${session.id}/events`, {
      headers: { authorization: `Bearer ${brain.keys.acme}`, accept: "text/event-stream" },
      signal: leaving.signal,
    });
    await reading;
    leaving.abort();
    await expect(stream).rejects.toThrow();
    // Brain sees the connection close while its read still waits, then the read answers
    await new Promise((resolve) => setTimeout(resolve, 100));
    held = undefined;
    release();

    await expect
      .poll(
        async () =>
          (await (await fetch(`${brain.url}/metrics`)).text()).match(/^brain_sse_clients \d+/m)?.[0],
      )
      .toBe("brain_sse_clients 0");
    const next = await request(`${brain.url}/sessions/${session.id}/events`, {
      headers: { authorization: `Bearer ${brain.keys.acme}`, accept: "text/event-stream" },
    });
    expect(next.statusCode).toBe(200);
    next.body.destroy();
  });
});
