import { afterAll, beforeAll, describe, expect, it, type TestOptions } from "vitest";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { needs } from "../helpers/host-needs.js";
import { metricSample } from "../helpers/metrics.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { waitForEvents } from "../helpers/turns.js";

/** A gauge's value on the Brain's /metrics now; NaN when it has none, which no expectation meets. */
async function gauge(brain: TestBrain, name: string): Promise<number> {
  return (await metricSample(brain, name)) ?? Number.NaN;
}

/**
 * What `read` reads once it is `expected`, or the last it read after 5 s: Brain counts a call
 * answered or a stream closed moments after the test has let it go.
 */
async function settled(read: () => number | Promise<number>, expected: number): Promise<number> {
  const deadline = Date.now() + 5000;
  let value = await read();
  while (value !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}

let service: ToolService;
const gates: (() => void)[] = [];
/** Answer every call of `hold` that is waiting. */
const releaseAll = () => {
  for (const open of gates.splice(0)) open();
};

beforeAll(async () => {
  service = await startToolService({
    // answers only when the test says so, or when Brain leaves
    "/hold": async (call, res) => {
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        call.closed.then(resolve);
      });
      if (!res.destroyed) sendJson(res, textResult("released"));
    },
  });
});

afterAll(async () => {
  releaseAll();
  await service?.close();
});

/** The calls of `hold` that reached the service for the session. */
const callsOf = (sessionId: string) => service.calls.filter((call) => call.body.session_id === sessionId);

/** The live gauges of a real Brain on `store`: each reads what is open now, and 0 once it is gone. */
function describeLiveGauges(
  storeName: string,
  store: () => Promise<{ store: Record<string, unknown>; env: Record<string, string> }>,
  options: TestOptions = {},
) {
  describe(`/metrics' live gauges, on ${storeName}`, options, () => {
    let brain: TestBrain;

    beforeAll(async () => {
      const { store: entry, env } = await store();
      brain = await startBrain(
        {
          store: entry,
          tools: [
            {
              name: "hold",
              description: "hold",
              input_schema: { type: "object" },
              url: service.at("/hold"),
              tenants: ["acme"],
            },
          ],
        },
        { env },
      );
    });

    afterAll(async () => {
      releaseAll();
      await brain?.stop();
    });

    it("counts the tool calls out (two in parallel, then one) and the turn's lease, until they end", async () => {
      const client = brain.client();
      const session = await client.createSession({
        tools: ["hold"],
        script: [
          {
            tool_calls: [
              { name: "hold", arguments: { n: 1 } },
              { name: "hold", arguments: { n: 2 } },
            ],
          },
          { text: "done" },
        ],
      });
      expect(await gauge(brain, "brain_turn_leases_held")).toBe(0);
      await client.sendMessage(session.id, "go");
      // both requests arrived: each was counted before it was sent
      expect(await settled(() => callsOf(session.id).length, 2)).toBe(2);
      expect(await gauge(brain, "brain_tool_calls_in_flight")).toBe(2);
      expect(await gauge(brain, "brain_turn_leases_held")).toBe(1);

      gates.shift()?.();
      expect(await settled(() => gauge(brain, "brain_tool_calls_in_flight"), 1)).toBe(1);
      expect(await gauge(brain, "brain_turn_leases_held")).toBe(1);

      releaseAll();
      await waitForEvents(client, session.id, (events) => events.at(-1)?.type === "turn.completed");
      expect(await settled(() => gauge(brain, "brain_tool_calls_in_flight"), 0)).toBe(0);
      expect(await settled(() => gauge(brain, "brain_turn_leases_held"), 0)).toBe(0);
    });

    it("counts the event streams open, until their clients leave", async () => {
      const client = brain.client();
      const session = await client.createSession({});
      const open = () => {
        const left = new AbortController();
        const response = fetch(`${brain.url}/sessions/${session.id}/events`, {
          headers: { accept: "text/event-stream", authorization: `Bearer ${brain.keys.acme}` },
          signal: left.signal,
        });
        return { left, response };
      };
      expect(await gauge(brain, "brain_sse_clients")).toBe(0);
      const streams = [open(), open()];
      // a stream is counted when its head is written, before the client has it
      for (const stream of streams) expect((await stream.response).status).toBe(200);
      expect(await gauge(brain, "brain_sse_clients")).toBe(2);

      streams[0]?.left.abort();
      expect(await settled(() => gauge(brain, "brain_sse_clients"), 1)).toBe(1);
      streams[1]?.left.abort();
      expect(await settled(() => gauge(brain, "brain_sse_clients"), 0)).toBe(0);
    });
  });
}

// a file of the Brain's own directory: the relative path is resolved against it
describeLiveGauges("SQLite", async () => ({ store: { kind: "sqlite", path: "brain.db" }, env: {} }));

let database: TestDatabase | undefined;
describeLiveGauges(
  "PostgreSQL",
  async () => {
    database = await createTestDatabase();
    return {
      store: { kind: "postgres", url_env: "BRAIN_TEST_DATABASE_URL", lease_seconds: 2 },
      env: { BRAIN_TEST_DATABASE_URL: database.url },
    };
  },
  needs("postgres"),
);
afterAll(async () => {
  await database?.drop();
});
