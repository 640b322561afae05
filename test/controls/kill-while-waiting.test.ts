import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { assertGapless, ofType, waitForEvents } from "../helpers/turns.js";

let service: ToolService;

beforeAll(async () => {
  service = await startToolService({
    "/guarded": (_call, res) => sendJson(res, textResult("done")),
    // never answers: a turn on it runs until Brain dies
    "/hang": () => {},
  });
});
afterAll(async () => service?.close());

const startWithTools = () =>
  startBrainProcess({
    tools: [
      {
        name: "guarded",
        description: "Needs a person's yes.",
        input_schema: { type: "object" },
        url: service.at("/guarded"),
        tenants: ["acme"],
        approval: "always",
      },
      {
        name: "hang",
        description: "Never answers.",
        input_schema: { type: "object" },
        url: service.at("/hang"),
        tenants: ["acme"],
      },
    ],
  });

// processes started, killed and started again, on a machine that may be busy with other tests
describe("a Brain killed with SIGKILL", { timeout: 60_000 }, () => {
  it("while a call waits for approval: after restart it still waits, and once approved it is sent once", async () => {
    const brain = await startWithTools();
    try {
      let client = brain.client();
      const session = await client.createSession({
        tools: ["guarded"],
        script: [{ tool_calls: [{ name: "guarded", arguments: { n: 1 } }] }, { text: "after: {{result}}" }],
      });
      await client.sendMessage(session.id, "go");
      const asked = await waitForEvents(client, session.id, (events) =>
        events.some((e) => e.type === "tool.approval_requested"),
      );
      const callId = ofType(asked, "tool.call")[0]?.data.call_id as string;
      await brain.kill();

      await brain.start();
      client = brain.client();
      // on PostgreSQL the turn is taken up once the dead instance's lease runs out; an answer given
      // before that could not tell whether the dead owner sent the call, and would end it brain_restarted
      const deadline = Date.now() + 30_000;
      while (!brain.output().includes("took up a turn waiting for approval") && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(await client.events(session.id)).toEqual(asked);
      expect((await client.getSession(session.id)).status).toBe("running");
      const before = service.calls.length;
      await client.answerApproval(session.id, callId, { decision: "approve" });
      const events = await waitForEvents(client, session.id, (all) => all.at(-1)?.type === "turn.completed");
      assertGapless(events);
      const sent = service.calls.slice(before);
      expect(sent.map((call) => [call.path, call.body.call_id])).toEqual([["/guarded", callId]]);
      expect(ofType(events, "message.assistant").at(-1)?.data.text).toBe("after: done");
    } finally {
      await brain.stop();
    }
  });

  it("with a message in the session's queue: after restart the queued message runs its turn", async () => {
    // the recovered turn's end and the queued message's start are one write
    await queuedAcrossStop((brain) => brain.kill(), "turn.failed", "brain_restarted");
  });
});

describe("a Brain stopped with SIGTERM", { timeout: 60_000 }, () => {
  it("with a message in the session's queue: the interrupted turn's end leaves it to the next start, which runs it", async () => {
    await queuedAcrossStop(
      async (brain) => expect(await brain.terminate()).toBe(0),
      "turn.interrupted",
      "cancelled",
    );
  });
});

/**
 * A turn whose call hangs, a message queued behind it, and Brain stopped by `stop` and started
 * again: the turn ends `turnEnd` with its call `callCode`, and the queued message runs its turn.
 */
async function queuedAcrossStop(
  stop: (brain: BrainProcess) => Promise<unknown>,
  turnEnd: string,
  callCode: string,
): Promise<void> {
  const brain = await startWithTools();
  try {
    let client = brain.client();
    const session = await client.createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "echo: {{message}}" }],
    });
    const before = service.calls.length;
    await client.sendMessage(session.id, "first");
    expect(await client.sendMessage(session.id, "queued", { onBusy: "enqueue" })).toEqual({ queued: 1 });
    const deadline = Date.now() + 10_000;
    while (service.calls.length === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    await stop(brain);

    await brain.start();
    client = brain.client();
    const events = await waitForEvents(client, session.id, (all) => all.at(-1)?.type === "turn.completed");
    assertGapless(events);
    expect(events.map((e) => e.type).slice(-6)).toEqual([
      "tool.result",
      turnEnd,
      "message.user",
      "turn.started",
      "message.assistant",
      "turn.completed",
    ]);
    expect(ofType(events, "tool.result")[0]?.data).toMatchObject({ error: { code: callCode } });
    expect(ofType(events, "message.user").at(-1)?.data).toMatchObject({ content: "queued" });
    expect(ofType(events, "message.assistant").at(-1)?.data.text).toBe("echo: queued");
    expect((await client.getSession(session.id)).status).toBe("idle");
  } finally {
    await brain.stop();
  }
}
