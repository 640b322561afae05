import pg from "pg";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { assertGapless, waitForEvents } from "../helpers/turns.js";

// appends wait for PostgreSQL up to half a lease (3 s); the lease runs out 6 s after its last renewal
const LEASE_SECONDS = 6;
const PASSWORD = "pg-password-5e1f9c";
const CLIENT_TRACE = "7c3a2b5e4d6f8a0b1c2d3e4f5a6b7c8d";

let database: TestDatabase;
let proxy: TcpProxy;
let service: ToolService;
let brain: BrainProcess;
const released: (() => void)[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("A Brain process on PostgreSQL when the database goes away", needs("postgres"), () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    // trust auth ignores it; it is here to be looked for where it must never be
    url.password = PASSWORD;
    service = await startToolService({
      "/hang": async (_call, res) => {
        await new Promise<void>((resolve) => released.push(resolve));
        sendJson(res, textResult("released"));
      },
    });
    brain = await startBrainProcess(
      {
        store: { kind: "postgres", url_env: "DATABASE_URL", lease_seconds: LEASE_SECONDS },
        tools: [
          {
            name: "hang",
            description: "hang",
            input_schema: { type: "object" },
            url: service.at("/hang"),
            tenants: ["acme"],
          },
        ],
      },
      { DATABASE_URL: url.toString() },
    );
  }, 30_000);

  afterAll(async () => {
    for (const release of released) release();
    await brain?.stop();
    await service?.close();
    await proxy?.close();
    await database?.drop();
  });

  async function turnWaitingOnItsCall() {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "after" }],
    });
    await client.sendMessage(session.id, "go");
    await waitForEvents(client, session.id, (events) => events.some((event) => event.type === "tool.call"));
    // stored before it is sent: the call is out once the service holds it
    await expect.poll(() => released.length).toBe(1);
    return session.id;
  }

  it("answers 503 while it is away, and a turn that writes meanwhile carries on once it is back", async () => {
    const sessionId = await turnWaitingOnItsCall();
    proxy.cut();
    // the call's result comes while the database is away: its append waits
    released.shift()?.();
    const away = await request(`${brain.url}/sessions/${sessionId}`, {
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01`,
      },
    });
    expect(away.statusCode).toBe(503);
    expect(away.headers["retry-after"]).toBe("1");
    expect(((await away.body.json()) as { error: { code: string } }).error.code).toBe("store_unavailable");
    // logged as the answer was sent, and read from the process's output a moment later
    await expect
      .poll(() =>
        brain
          .output()
          .split("\n")
          .filter((line) => line.includes("request failed: the store cannot be reached"))
          .map((line) => JSON.parse(line)),
      )
      .toEqual([expect.objectContaining({ route: `/sessions/${sessionId}`, trace_id: CLIENT_TRACE })]);
    await sleep(1200);
    proxy.restore();
    const events = await waitForEvents(brain.client(), sessionId, (stored) =>
      stored.some((event) => event.type === "turn.completed"),
    );
    assertGapless(events);
    expect(events.filter((event) => event.type === "tool.result")).toHaveLength(1);
    expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "released" }],
    });
  });

  it("answers 500 when the database refuses a statement, logged once with the client's trace id", async () => {
    // the database is there but refuses to store a session, as a failing constraint or disk would
    const sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    await sql.query(`
      CREATE FUNCTION refuse_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the test refuses new sessions'; END $$;
      CREATE TRIGGER refuse_sessions BEFORE INSERT ON brain_sessions
        FOR EACH ROW EXECUTE FUNCTION refuse_sessions();`);
    try {
      const refused = await request(`${brain.url}/sessions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${brain.keys.acme}`,
          "content-type": "application/json",
          traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b8-01`,
        },
        body: JSON.stringify({ config: { script: [{ text: "never" }] } }),
      });
      expect(refused.statusCode).toBe(500);
      expect(await refused.body.json()).toEqual({
        error: { code: "internal", message: "Brain failed to handle this request; it is logged" },
      });
      await expect
        .poll(() =>
          brain
            .output()
            .split("\n")
            .filter((line) => line.includes('"msg":"request failed"'))
            .map((line) => JSON.parse(line)),
        )
        .toEqual([expect.objectContaining({ method: "POST", route: "/sessions", trace_id: CLIENT_TRACE })]);
    } finally {
      await sql.query("DROP TRIGGER refuse_sessions ON brain_sessions; DROP FUNCTION refuse_sessions();");
      await sql.end();
    }
    // and the next session is stored
    expect((await brain.client().createSession({ script: [{ text: "stored" }] })).id).toMatch(/^ses_/);
  });

  it("ends a turn store_unavailable when its write waits longer than half a lease, once it is back", async () => {
    const sessionId = await turnWaitingOnItsCall();
    const before = await brain.client().events(sessionId);
    proxy.cut();
    released.shift()?.();
    // past the append's wait (3 s), within the lease (6 s after its last renewal)
    await sleep(3500);
    proxy.restore();
    const events = await waitForEvents(
      brain.client(),
      sessionId,
      (stored) => stored.some((event) => event.type === "turn.failed"),
      15_000,
    );
    assertGapless(events);
    // everything acknowledged before the cut is still there
    expect(events.slice(0, before.length)).toEqual(before);
    const errorOf = (event: (typeof events)[number]) =>
      event.type === "tool.result" || event.type === "turn.failed" ? event.data.error : undefined;
    expect(events.slice(before.length).map((event) => [event.type, errorOf(event)])).toEqual([
      ["tool.result", expect.objectContaining({ code: "brain_restarted" })],
      [
        "turn.failed",
        { code: "store_unavailable", message: "the store could not be reached; the turn stopped" },
      ],
    ]);
    expect(brain.output()).not.toContain(PASSWORD);
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
    // and the session takes messages again
    expect((await brain.client().getSession(sessionId)).status).toBe("idle");
  }, 30_000);
});
