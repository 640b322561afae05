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
