import { connect } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BrainClient, StoredEvent } from "../src/client/client.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { assertGapless, runTurn } from "./helpers/turns.js";

let brain: TestBrain;

beforeAll(async () => {
  brain = await startBrain({});
});

afterAll(async () => {
  await brain?.stop();
});

/** The `id:` lines of an SSE text, in order. */
const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));

/** Every stored event, paged as a client must: until a page is empty. */
async function readAll(client: BrainClient, sessionId: string) {
  const events: StoredEvent[] = [];
  for (;;) {
    const page = await client.events(sessionId, { after: events.at(-1)?.seq ?? 0, limit: 1000 });
    if (page.length === 0) return events;
    events.push(...page);
  }
}

/** A raw SSE client of `sessionId` that reads nothing until `drain` is called. */
function stalledClient(brainUrl: string, key: string, sessionId: string) {
  const socket = connect(Number(new URL(brainUrl).port), "127.0.0.1");
  socket.pause();
  socket.write(
    `GET /sessions/${sessionId}/events HTTP/1.1\r\nhost: brain\r\n` +
      `authorization: Bearer ${key}\r\naccept: text/event-stream\r\n\r\n`,
  );
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  /** Read what Brain sent until it closed the connection: the seqs received. */
  const drain = async () => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.resume();
    await closed;
    return ids(text);
  };
  return { drain };
}

it("drops an SSE client that stops reading, without holding the session back, and it resumes losing nothing", async () => {
  const client = brain.client();
  const session = await client.createSession();
  const stalled = stalledClient(brain.url, brain.keys.acme, session.id);

  // each turn stores the message and its echo, ~1.8 MB, and sends a delta as big live: far more
  // than the socket buffers and Brain's 8 MiB allowance for one client
  const message = "x".repeat(900_000);
  for (let turn = 0; turn < 12; turn++) {
    const events = await runTurn(client, session.id, message);
    expect(events.at(-1)?.type).toBe("turn.completed");
  }

  // reading now: what was buffered, then the end Brain put to it
  const received = await stalled.drain();
  const stored = await readAll(client, session.id);
  assertGapless(stored);
  const last = stored.at(-1)?.seq ?? 0;
  expect(received.length).toBeGreaterThan(0);
  expect(received.at(-1)).toBeLessThan(last);
  // a whole prefix, in order: nothing skipped before the drop
  expect(received).toEqual(stored.slice(0, received.length).map((event) => event.seq));

  // resuming from the last id it saw brings the rest, and only the rest
  const resumedAfter = received.at(-1) ?? 0;
  const rest: number[] = [];
  const controller = new AbortController();
  for await (const event of client.streamEvents(session.id, {
    after: resumedAfter,
    signal: controller.signal,
  })) {
    if ("seq" in event) rest.push(event.seq);
    if ("seq" in event && event.seq === last) controller.abort();
  }
  expect([...received, ...rest]).toEqual(stored.map((event) => event.seq));

  // a client that stalls while the history is still going out is dropped too, once the live
  // events held for it pass the limit
  const stalledInHistory = stalledClient(brain.url, brain.keys.acme, session.id);
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (let turn = 0; turn < 6; turn++) await runTurn(client, session.id, message);
  const partial = await stalledInHistory.drain();
  expect(partial.length).toBeGreaterThan(0);
  expect(partial).toEqual(partial.map((_, i) => i + 1));
});

it("bounds a page of events as JSON by its size, not only by its count", async () => {
  const client = brain.client();
  const session = await client.createSession();
  const message = "y".repeat(900_000);
  for (let turn = 0; turn < 6; turn++) await runTurn(client, session.id, message);
  // 6 turns store 12 events of ~900 KB: more than one 8 MiB page
  const first = await client.events(session.id, { limit: 1000 });
  const all = await readAll(client, session.id);
  expect(all.filter((event) => event.type === "message.user")).toHaveLength(6);
  expect(first.length).toBeGreaterThan(1);
  expect(first.length).toBeLessThan(all.length);
  expect(first).toEqual(all.slice(0, first.length));
  assertGapless(all);
});

it("drops an SSE client that reads none of the history for the stall time, even with no live events", async () => {
  const stalling = await startBrain({}, { start: { sseHistoryStallMs: 300 } });
  try {
    const client = stalling.client();
    const session = await client.createSession();
    // about 7 MB of history: more than the socket buffers hold, so the history waits on the client
    const message = "z".repeat(900_000);
    for (let turn = 0; turn < 4; turn++) await runTurn(client, session.id, message);
    const stalled = stalledClient(stalling.url, stalling.keys.acme, session.id);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // reading now: what was buffered before the drop, a prefix of the history, and then the end
    const received = await stalled.drain();
    const stored = await readAll(client, session.id);
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(stored.length);
    expect(received).toEqual(stored.slice(0, received.length).map((event) => event.seq));
  } finally {
    await stalling.stop();
  }
});
