import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { runTurn } from "../helpers/turns.js";

const FAILING = "could not export traces";

let service: ToolService;

beforeAll(async () => {
  service = await startToolService({ "/echo": (_call, res) => sendJson(res, textResult("echoed")) });
});
afterAll(async () => service?.close());

const echo = () => ({
  name: "echo",
  description: "echo",
  input_schema: { type: "object" },
  url: service.at("/echo"),
  tenants: ["acme"],
});

/** A turn of one echo call in a session of its own: how it ended. */
async function echoTurn(brain: TestBrain) {
  return (await echoSessionTurn(brain)).end;
}

async function echoSessionTurn(brain: TestBrain) {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["echo"],
    script: [{ tool_calls: [{ name: "echo", arguments: {} }] }, { text: "done" }],
  });
  const events = await runTurn(client, session.id, "go");
  return { end: events.at(-1)?.type, sessionId: session.id };
}

const linesSaying = (brain: TestBrain, text: string) =>
  brain
    .logs()
    .split("\n")
    .filter((line) => line.includes(text));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a collector that fails", () => {
  let receiver: OtlpReceiver;
  let brain: TestBrain;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    brain = await startBrain(
      { tools: [echo()] },
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "10" } },
    );
  });
  afterAll(async () => {
    await brain?.stop();
    await receiver?.close();
  });

  it("answering 500: turns go on, nothing is recorded for a pause, Brain says so once, then once when it is back", async () => {
    receiver.answer(500);
    expect(await echoTurn(brain)).toBe("turn.completed");
    await until(() => receiver.requests.length >= 1, "a first export");
    // logged as the failed export comes back, in the same callback that starts the pause
    await until(() => linesSaying(brain, FAILING).length === 1, "the warning");
    // for a pause after the failed export (5 s) Brain records no span: a turn goes on as an
    // unsampled one does, and none of its spans is sent to the failing collector
    const paused = await echoSessionTurn(brain);
    expect(paused.end).toBe("turn.completed");
    expect(linesSaying(brain, FAILING)).toHaveLength(1);
    expect(JSON.parse(linesSaying(brain, FAILING)[0] as string)).toMatchObject({ level: 40 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests.filter(({ body }) => body.includes(paused.sessionId))).toEqual([]);
    expect(receiver.spans).toEqual([]);

    receiver.answer(200);
    // once the pause is over, a turn's spans are recorded and reach the collector again
    const deadline = Date.now() + 15_000;
    while (!receiver.spans.some((span) => span.name === "turn")) {
      if (Date.now() > deadline) throw new Error("gave up waiting for a turn's span after the pause");
      expect(await echoTurn(brain)).toBe("turn.completed");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until(() => linesSaying(brain, "exporting traces again").length === 1, "the line saying so");
    expect(linesSaying(brain, FAILING)).toHaveLength(1);
  });
});

describe("a collector that is down", () => {
  it("slows no turn to failure and is logged once; Brain still stops", async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const brain = await startBrain(
      { tools: [echo()] },
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: gone.url,
          OTEL_BSP_SCHEDULE_DELAY: "10",
          // the exporter retries a refused connection until this runs out
          OTEL_EXPORTER_OTLP_TIMEOUT: "300",
        },
      },
    );
    try {
      expect(await echoTurn(brain)).toBe("turn.completed");
      await until(() => linesSaying(brain, FAILING).length > 0, "the warning");
      expect(await echoTurn(brain)).toBe("turn.completed");
      expect(linesSaying(brain, FAILING)).toHaveLength(1);
      expect(linesSaying(brain, FAILING)[0]).toContain("ECONNREFUSED");
    } finally {
      await brain.stop();
    }
  });
});
