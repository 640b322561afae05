import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
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
  const binding = (name: string, approval?: "always") => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: service.at(`/${name}`),
    tenants: ["acme"],
    ...(approval && { approval }),
  });
  brain = await startBrainProcess(
    { tools: [binding("hang"), binding("guarded", "always")] },
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" },
  );
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
  await receiver?.close();
});

describe("a turn in a Brain killed with SIGKILL stays in its trace", () => {
  it("ended after the restart, and picked up while its call waits for approval", async () => {
    let client = brain.client();
    const hanging = await client.createSession({
      tools: ["hang"],
      script: [{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "never" }],
    });
    const waiting = await client.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [{ name: "guarded", arguments: {} }] }, { text: "approved: {{result}}" }],
    });
    await client.sendMessage(hanging.id, "go", { traceparent: traceparentFor("1111111111111111") });
    await client.sendMessage(waiting.id, "go", { traceparent: traceparentFor("2222222222222222") });
    const turnSpanOf = async (sessionId: string) => {
      const events = await waitForEvents(client, sessionId, (all) => all.some((e) => e.type === "tool.call"));
      return String(ofType(events, "turn.started").at(-1)?.data.traceparent).split("-")[2] as string;
    };
    const hangingTurn = await turnSpanOf(hanging.id);
    const waitingTurn = await turnSpanOf(waiting.id);
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
