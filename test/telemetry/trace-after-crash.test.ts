import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient } from "../../src/client/index.js";
import { type BrainProcess, newKeys, startBrainProcess } from "../helpers/brain-process.js";
import { needs } from "../helpers/host-needs.js";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, waitForEvents } from "../helpers/turns.js";

const CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const traceparentFor = (span: string) => `00-${CLIENT_TRACE}-${span}-01`;

let receiver: OtlpReceiver;
let service: ToolService;
let brain: BrainProcess;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  service = await startToolService({
    "/guarded": (_call, res) => sendJson(res, textResult("done")),
    // never answers: the call is out when Brain dies
    "/hang": () => {},
  });
  brain = await startBrainProcess({ tools: [binding("hang"), binding("guarded", "always")] }, exporting());
});

const binding = (name: string, approval?: "always") => ({
  name,
  description: name,
  input_schema: { type: "object" },
  url: service.at(`/${name}`),
  tenants: ["acme"],
  ...(approval && { approval }),
});
/** A Brain's environment that exports its spans to the receiver moments after they end. */
const exporting = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" });

/** A session whose one tool call never answers: its turn is out when its Brain dies. */
const HANGING = {
  tools: ["hang"],
  script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "never" }],
};

/** The span id of the session's turn, as its `turn.started` names it, once its tool call is out. */
async function turnSpanOf(client: BrainClient, sessionId: string): Promise<string> {
  const events = await waitForEvents(client, sessionId, (all) => all.some((e) => e.type === "tool.call"));
  return String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-")[2] as string;
}

/** A Brain's log lines that say `message`, parsed. */
const linesSaying = (instance: BrainProcess, message: string) =>
  instance
    .output()
    .split("\n")
    .filter((text) => text.includes(message))
    .map((text) => JSON.parse(text));

afterAll(async () => {
  await brain?.stop();
  await service?.close();
  await receiver?.close();
});

describe("a turn in a Brain killed with SIGKILL stays in its trace", () => {
  it("ended after the restart, and picked up while its call waits for approval", async () => {
    let client = brain.client();
    const hanging = await client.createSession(HANGING);
    const waiting = await client.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [{ name: "guarded", arguments: {} }] }, { text: "approved: {{result}}" }],
    });
    await client.sendMessage(hanging.id, "go", { traceparent: traceparentFor("1111111111111111") });
    await client.sendMessage(waiting.id, "go", { traceparent: traceparentFor("2222222222222222") });
    const hangingTurn = await turnSpanOf(client, hanging.id);
    const waitingTurn = await turnSpanOf(client, waiting.id);
    // what the first Brain exported before it died: each turn's model call, under its turn
    await receiver.waitFor(
      (spans) =>
        spans.filter((span) => span.name === "chat default" && span.traceId === CLIENT_TRACE).length === 2,
    );
    await waitForEvents(client, waiting.id, (all) => all.some((e) => e.type === "tool.approval_requested"));
    await brain.kill();
    await brain.start();
    client = brain.client();

    const ended = await waitForEvents(client, hanging.id, (all) => all.at(-1)?.type === "turn.failed");
    expect(ofType(ended, "turn.failed").at(-1)?.data.error.code).toBe("brain_restarted");
    const [turnEnd] = (
      await receiver.waitFor((spans) => spans.some((span) => span.name === "turn end"))
    ).filter((span) => span.name === "turn end");
    expect(turnEnd).toMatchObject({
      traceId: CLIENT_TRACE,
      parentSpanId: hangingTurn,
      status: { code: 2 },
      attributes: expect.objectContaining({
        "error.type": "brain_restarted",
        "brain.session.id": hanging.id,
      }),
    });

    // the waiting turn goes on under the restarted Brain, in its trace, and its call is sent there
    await waitForEvents(client, waiting.id, () =>
      brain.output().includes("took up a turn waiting for approval"),
    );
    const callId = ofType(await client.events(waiting.id), "tool.call")[0]?.data.call_id as string;
    await client.answerApproval(waiting.id, callId, { decision: "approve" });
    await waitForEvents(client, waiting.id, (all) => all.at(-1)?.type === "turn.completed");
    const spans = await receiver.waitFor((all) =>
      all.some((span) => span.name === "turn" && span.parentSpanId === waitingTurn),
    );
    const resumed = spans.find((span) => span.name === "turn" && span.parentSpanId === waitingTurn);
    expect(resumed?.traceId).toBe(CLIENT_TRACE);
    expect(resumed?.attributes["brain.turn.end"]).toBe("completed");
    const sent = spans.find((span) => span.name === "execute_tool guarded");
    expect(sent?.parentSpanId).toBe(resumed?.spanId);
    const guarded = service.calls.find((call) => call.path === "/guarded");
    expect(guarded?.headers.traceparent).toBe(traceparentFor(String(sent?.spanId)));
    // the model calls the first Brain made sit under the same turn spans
    const firstCalls = spans.filter((span) => span.name === "chat default" && span.traceId === CLIENT_TRACE);
    expect(firstCalls.map((span) => span.parentSpanId)).toEqual(
      expect.arrayContaining([hangingTurn, waitingTurn]),
    );
  });
});

describe(
  "a turn of Brain instances sharing PostgreSQL, taken over by another, stays in its trace",
  needs("postgres"),
  () => {
    let database: TestDatabase;
    const instances: BrainProcess[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      const keys = newKeys();
      // a short lease: the other instance takes the turn over within a couple of seconds
      const store = { kind: "postgres", url_env: "DATABASE_URL", lease_seconds: 2 };
      const start = () =>
        startBrainProcess(
          { store, tools: [binding("hang")] },
          { DATABASE_URL: database.url, ...exporting() },
          keys,
        );
      // one after the other: both would migrate the new database at once
      instances.push(await start(), await start());
    }, 30_000);

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop().catch(() => undefined)));
      await database?.drop();
    });

    it("ended by the other when its own was killed with SIGKILL: under the turn's span", async () => {
      const [a, b] = instances as [BrainProcess, BrainProcess];
      const session = await a.client().createSession(HANGING);
      await a.client().sendMessage(session.id, "go", { traceparent: traceparentFor("3333333333333333") });
      const turnSpan = await turnSpanOf(a.client(), session.id);
      await a.kill();

      const ended = await waitForEvents(b.client(), session.id, (all) => all.at(-1)?.type === "turn.failed");
      expect(ofType(ended, "turn.failed").at(-1)?.data.error.code).toBe("brain_restarted");
      const spans = await receiver.waitFor((all) =>
        all.some((span) => span.name === "turn end" && span.parentSpanId === turnSpan),
      );
      expect(spans.find((span) => span.name === "turn end" && span.parentSpanId === turnSpan)).toMatchObject({
        traceId: CLIENT_TRACE,
        status: { code: 2 },
        attributes: expect.objectContaining({
          "error.type": "brain_restarted",
          "brain.session.id": session.id,
        }),
      });
      // and B's line about it is in the same trace
      await expect
        .poll(() => linesSaying(b, "ended a turn whose owner was gone"))
        .toEqual([expect.objectContaining({ session_id: session.id, trace_id: CLIENT_TRACE })]);
    });

    it("logs a lease it could not release in the trace of the turn it held", async () => {
      const b = instances[1] as BrainProcess;
      const session = await b.client().createSession({ script: [{ text: "done" }] });
      // the database refuses to delete this session's lease, as a failing database would
      const sql = new pg.Client({ connectionString: database.url });
      await sql.connect();
      await sql.query(`
        CREATE FUNCTION refuse_release() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF OLD.session_id = '${session.id}' THEN RAISE EXCEPTION 'the test refuses this release'; END IF;
          RETURN OLD;
        END $$;
        CREATE TRIGGER refuse_release BEFORE DELETE ON brain_turn_leases
          FOR EACH ROW EXECUTE FUNCTION refuse_release();`);
      try {
        await b.client().sendMessage(session.id, "go", { traceparent: traceparentFor("5555555555555555") });
        const events = await waitForEvents(
          b.client(),
          session.id,
          (all) => all.at(-1)?.type === "turn.completed",
        );
        const turnSpan = String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-")[2];
        await expect
          .poll(() => linesSaying(b, "could not release a turn lease"))
          .toEqual([
            expect.objectContaining({ session_id: session.id, trace_id: CLIENT_TRACE, span_id: turnSpan }),
          ]);
      } finally {
        await sql.query("DROP TRIGGER refuse_release ON brain_turn_leases; DROP FUNCTION refuse_release();");
        await sql.end();
      }
    });

    it("logs a lease lost to another instance in the trace of the turn it held", async () => {
      const b = instances[1] as BrainProcess;
      const session = await b.client().createSession(HANGING);
      await b.client().sendMessage(session.id, "go", { traceparent: traceparentFor("4444444444444444") });
      const turnSpan = await turnSpanOf(b.client(), session.id);
      // what another instance's takeover writes: its name and a newer token on the lease
      const sql = new pg.Client({ connectionString: database.url });
      await sql.connect();
      await sql.query(
        "UPDATE brain_turn_leases SET owner = 'brn_other', token = token + 1000 WHERE session_id = $1",
        [session.id],
      );
      await sql.end();
      await expect
        .poll(() => linesSaying(b, "lost a turn lease"))
        .toEqual([
          expect.objectContaining({ session_id: session.id, trace_id: CLIENT_TRACE, span_id: turnSpan }),
        ]);
    });
  },
);
