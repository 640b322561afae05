import { afterAll, beforeAll, expect, it } from "vitest";
import { BrainClient, type SessionEvent, type StreamStatus } from "../src/client/client.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { startTcpProxy, type TcpProxy } from "./helpers/tcp-proxy.js";

// The client's event stream across a dropped connection: a real Brain behind a TCP proxy the test
// cuts while a turn runs, and lets through again once the turn has ended.

let brain: TestBrain;
let proxy: TcpProxy;

beforeAll(async () => {
  brain = await startBrain({});
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(brain.url).port));
});

afterAll(async () => {
  await proxy?.close();
  await brain?.stop();
});

it("resumes after the last event it saw (Last-Event-ID): nothing twice, nothing missed", async () => {
  const direct = brain.client();
  const session = await direct.createSession({ script: [{ delay_ms: 800, text: "late answer" }] });
  const client = new BrainClient(`http://127.0.0.1:${proxy.port}`, brain.keys.acme);
  const statuses: StreamStatus["state"][] = [];
  const seen: SessionEvent[] = [];
  const stream = client.streamEvents(session.id, {
    signal: AbortSignal.timeout(15_000),
    onStatus: (status) => statuses.push(status.state),
  });
  const first = stream.next();
  await direct.sendMessage(session.id, "hello");
  for (let next = await first; !next.done; next = await stream.next()) {
    seen.push(next.value);
    if (next.value.type === "turn.started") {
      proxy.cut();
      // the turn ends while this client is away
      await expect
        .poll(async () => (await direct.events(session.id)).at(-1)?.type, { timeout: 10_000 })
        .toBe("turn.completed");
      proxy.restore();
    }
    if (next.value.type === "turn.completed") break;
  }
  await stream.return(undefined);
  const stored = await direct.events(session.id);
  expect(seen.filter((event) => "seq" in event)).toEqual(stored);
  expect(statuses[0]).toBe("connected");
  expect(statuses).toContain("reconnecting");
  expect(statuses.at(-1)).toBe("connected");
});

it("takes a stream that goes silent, keep-alives and all, for dropped, and resumes it", async () => {
  const quiet = await startBrain({}, { start: { sseKeepAliveMs: 100 } });
  const front = await startTcpProxy("127.0.0.1", Number(new URL(quiet.url).port));
  try {
    const direct = quiet.client();
    const session = await direct.createSession();
    const client = new BrainClient(`http://127.0.0.1:${front.port}`, quiet.keys.acme);
    const statuses: StreamStatus[] = [];
    const stream = client.streamEvents(session.id, {
      silenceMs: 500,
      signal: AbortSignal.timeout(15_000),
      onStatus: (status) => statuses.push(status),
    });
    expect((await stream.next()).value?.type).toBe("session.created");
    const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // a caller that takes its time over an event is no silence of Brain's
    await waitMs(1000);
    // and while it waits for the next one, keep-alives alone hold a stream with no events open
    const next = stream.next();
    await waitMs(1000);
    expect(statuses.map((status) => status.state)).toEqual(["connected"]);

    front.freeze();
    await expect.poll(() => statuses.length, { timeout: 5000 }).toBeGreaterThan(2);
    const [, lost, again] = statuses;
    expect(lost).toMatchObject({ state: "reconnecting", after: 1 });
    expect(lost?.state === "reconnecting" && lost.error.message).toBe("nothing came from Brain for 500 ms");
    expect(again).toMatchObject({ state: "connected", after: 1 });
    // the new connection carries what comes next
    await direct.sendMessage(session.id, "hello");
    expect((await next).value).toMatchObject({ seq: 2, type: "message.user" });
    await stream.return(undefined);
  } finally {
    await front.close();
    await quiet.stop();
  }
});

it("ends at once, asking nothing, when its signal fired before it began", async () => {
  const client = brain.client();
  const session = await client.createSession();
  const types: string[] = [];
  for await (const event of client.streamEvents(session.id, { signal: AbortSignal.abort() }))
    types.push(event.type);
  expect(types).toEqual([]);
});

it("ends when the session closes, and says why it cannot start", async () => {
  const client = brain.client();
  const session = await client.createSession();
  await client.close(session.id);
  const types: string[] = [];
  for await (const event of client.streamEvents(session.id)) types.push(event.type);
  expect(types).toEqual(["session.created", "session.closed"]);
  // resuming after the end: nothing more, and the iteration ends instead of reconnecting
  for await (const event of client.streamEvents(session.id, { after: 2 })) types.push(event.type);
  expect(types).toHaveLength(2);
  const missing = client.streamEvents("ses_nothere");
  await expect(missing.next()).rejects.toMatchObject({ status: 404, code: "not_found" });
});
