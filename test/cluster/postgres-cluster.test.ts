import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent, StoredEvent } from "../../src/client/client.js";
import { type BrainProcess, newKeys, startBrainProcess } from "../helpers/brain-process.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { assertGapless, storedOnly } from "../helpers/turns.js";

const LEASE_SECONDS = 2;

let database: TestDatabase;
let service: ToolService;
let release: () => void = () => {};
const brains: BrainProcess[] = [];

const binding = (name: string) => service.binding(name);

/** Start one more instance of the cluster on the shared database and keys. */
async function startInstance(keys: BrainProcess["keys"]): Promise<BrainProcess> {
  const brain = await startBrainProcess(
    {
      store: { kind: "postgres", url_env: "DATABASE_URL", lease_seconds: LEASE_SECONDS },
      tools: ["progress", "hang", "echo"].map(binding),
      log_level: "debug",
    },
    { DATABASE_URL: database.url },
    keys,
  );
  brains.push(brain);
  return brain;
}

/**
 * Collect a session's events live from one instance, until `done` says so. Resolves once the stream
 * is live: its first event came, and the instance subscribes before it reads the history.
 */
async function watch(
  brain: BrainProcess,
  sessionId: string,
  done: (event: SessionEvent) => boolean,
  after = 0,
): Promise<{ events: Promise<SessionEvent[]> }> {
  const controller = new AbortController();
  const stream = brain.client().streamEvents(sessionId, { after, signal: controller.signal });
  const first = await stream.next();
  const events = (async () => {
    const seen: SessionEvent[] = [];
    let next = first;
    while (!next.done) {
      seen.push(next.value);
      if (done(next.value)) break;
      next = await stream.next();
    }
    controller.abort();
    return seen;
  })();
  return { events };
}

const turnEnded = (event: SessionEvent) =>
  event.type === "turn.completed" || event.type === "turn.failed" || event.type === "turn.interrupted";

async function waitFor(what: () => Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("Brain instances on one PostgreSQL", needs("postgres"), () => {
  let a: BrainProcess;
  let b: BrainProcess;
  let c: BrainProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startToolService({
      "/echo": (call, res) => sendJson(res, textResult(JSON.stringify(call.body.arguments))),
      "/progress": async (_call, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (let i = 1; i <= 3; i++) {
          res.write(`event: progress\ndata: {"step":${i},"pad":"${"p".repeat(i === 3 ? 20_000 : 10)}"}\n\n`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        res.end('event: result\ndata: {"content":[{"type":"text","text":"done"}]}\n\n');
      },
      "/hang": async (_call, res) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        sendJson(res, textResult("released"));
      },
    });
    const keys = newKeys();
    // started together: both migrate the new database at once
    [a, b, c] = (await Promise.all([startInstance(keys), startInstance(keys), startInstance(keys)])) as [
      BrainProcess,
      BrainProcess,
      BrainProcess,
    ];
  }, 60_000);

  afterAll(async () => {
    release();
    await Promise.all(brains.map((brain) => brain.stop().catch(() => undefined)));
    await service?.close();
    await database?.drop();
  });

  it("answers on any instance: created on A, message on B, watched live on C in seq order", async () => {
    const session = await a.client().createSession({
      tools: ["progress", "echo"],
      script: [
        {
          tool_calls: [
            { name: "progress", arguments: {} },
            { name: "echo", arguments: { n: 1 } },
          ],
        },
        { text: "done" },
      ],
    });
    const watching = await watch(c, session.id, turnEnded);
    await b.client().sendMessage(session.id, "go");
    const seen = await watching.events;
    const stored = await a.client().events(session.id);
    assertGapless(stored);
    expect(storedOnly(seen)).toEqual(stored);
    const progress = seen.filter((event) => event.type === "tool.progress");
    // the last progress event is past a notification's 8,000 bytes: it crossed through the table
    expect(progress.map((event) => (event.data.data as { step: number }).step)).toEqual([1, 2, 3]);
    const typeAt = (type: string) => seen.findIndex((event) => event.type === type);
    expect(seen.indexOf(progress[0] as SessionEvent)).toBeGreaterThan(typeAt("tool.call"));
    expect(seen.indexOf(progress[2] as SessionEvent)).toBeLessThan(
      seen.findIndex((event) => event.type === "tool.result" && event.data.name === "progress"),
    );
    expect(seen.map((event) => event.type)).toContain("model.delta");
    expect(await c.client().events(session.id)).toEqual(stored);
  });

  it("keeps every session gapless with turns on every instance and clients on the others", async () => {
    const instances = [a, b, c];
    const runs = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const owner = instances[i % 3] as BrainProcess;
        const watcher = instances[(i + 1) % 3] as BrainProcess;
        const calls = Array.from({ length: 4 }, (_, n) => ({ name: "echo", arguments: { n } }));
        const session = await owner.client().createSession({
          tools: ["echo"],
          script: [{ tool_calls: calls }, { tool_calls: calls }, { text: "ok" }],
        });
        const watching = await watch(watcher, session.id, turnEnded);
        await owner.client().sendMessage(session.id, "go");
        return { id: session.id, seen: await watching.events };
      }),
    );
    for (const run of runs) {
      const stored = await a.client().events(run.id);
      assertGapless(stored);
      expect(storedOnly(run.seen)).toEqual(stored);
    }
  });

  it("resumes on another instance with Last-Event-ID, with no gap and no duplicate", async () => {
    const session = await a.client().createSession({
      tools: ["echo"],
      script: [{ tool_calls: [{ name: "echo", arguments: {} }] }, { text: "one" }],
    });
    const first = await watch(a, session.id, (event) => event.type === "tool.call");
    await a.client().sendMessage(session.id, "go");
    const before = storedOnly(await first.events);
    const resumed = await watch(b, session.id, turnEnded, before.at(-1)?.seq ?? 0);
    const after = storedOnly(await resumed.events);
    const stored: StoredEvent[] = await c.client().events(session.id);
    expect([...before, ...after]).toEqual(stored);
  });

  it("reaches the turn's owner with an interrupt or a close sent to another instance", async () => {
    const hang = { tool_calls: [{ name: "hang", arguments: {} }] };
    const session = await a
      .client()
      .createSession({ tools: ["hang"], script: [hang, hang, { text: "after" }] });
    await a.client().sendMessage(session.id, "go");
    await waitFor(
      async () => (await a.client().events(session.id)).some((event) => event.type === "tool.call"),
      10_000,
      "no tool call",
    );
    await b.client().interrupt(session.id);
    const events = await c.client().events(session.id);
    expect(events.map((event) => event.type).slice(-2)).toEqual(["tool.result", "turn.interrupted"]);
    expect(events.at(-2)?.data).toMatchObject({ error: { code: "cancelled" } });

    await a.client().sendMessage(session.id, "again");
    await waitFor(
      async () =>
        (await a.client().events(session.id)).filter((event) => event.type === "tool.call").length === 2,
      10_000,
      "no second tool call",
    );
    const closed = await c.client().close(session.id);
    expect(closed.status).toBe("closed");
    expect((await b.client().events(session.id)).map((event) => event.type).slice(-3)).toEqual([
      "tool.result",
      "turn.interrupted",
      "session.closed",
    ]);
  });

  it("takes over the turns of a killed instance and ends each as a restart would", async () => {
    const doomed = await startInstance(a.keys);
    const session = await doomed.client().createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "after" }],
    });
    await doomed.client().sendMessage(session.id, "go");
    await waitFor(
      async () => (await a.client().events(session.id)).some((event) => event.type === "tool.call"),
      10_000,
      "no tool call",
    );
    await doomed.kill();
    await waitFor(
      async () => (await b.client().getSession(session.id)).status === "idle",
      (LEASE_SECONDS + 5) * 1000,
      "the turn was not taken over",
    );
    const events = await b.client().events(session.id);
    assertGapless(events);
    expect(events.slice(-2).map((event) => [event.type, event.data])).toEqual([
      [
        "tool.result",
        expect.objectContaining({
          unknown_outcome: true,
          error: expect.objectContaining({ code: "brain_restarted" }),
        }),
      ],
      ["turn.failed", { error: { code: "brain_restarted", message: "Brain stopped during the turn" } }],
    ]);
    // the session takes messages again, on any instance
    const next = await b.client().createSession({ tools: ["echo"], script: [{ text: "fine" }] });
    expect(next.status).toBe("idle");
  });

  it("never lets a paused owner write to a turn it lost", async () => {
    const paused = await startInstance(a.keys);
    const session = await paused.client().createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "after" }],
    });
    await paused.client().sendMessage(session.id, "go");
    await waitFor(
      async () => (await a.client().events(session.id)).some((event) => event.type === "tool.call"),
      10_000,
      "no tool call",
    );
    paused.process().kill("SIGSTOP");
    await waitFor(
      async () => (await b.client().getSession(session.id)).status === "idle",
      (LEASE_SECONDS + 5) * 1000,
      "the turn was not taken over",
    );
    const takenOver = await b.client().events(session.id);
    // the paused owner comes back; its call answers; it must not write its result to the turn
    paused.process().kill("SIGCONT");
    release();
    await waitFor(
      async () => paused.output().includes("lost a turn lease") || paused.output().includes("refused"),
      10_000,
      "the owner did not notice",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await c.client().events(session.id)).toEqual(takenOver);
    await paused.stop();
  });
});
