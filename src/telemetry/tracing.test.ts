import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ExportSettings } from "./export-settings.js";
import { createLogger } from "./logger.js";
import { createTracing, type SpanContext, type Tracing } from "./tracing.js";

/**
 * A collector on loopback that takes each export and answers it with `status`, or, while `status`
 * is "held", only when released.
 */
async function startCollector() {
  const held: ServerResponse[] = [];
  const received: { status: number; body: string }[] = [];
  let status: number | "held" = "held";
  const answer = (res: ServerResponse, code: number) =>
    res.writeHead(code, { "content-type": "application/json" }).end("{}");
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (status === "held") return held.push(res);
    received.push({ status, body });
    answer(res, status);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    held,
    /** Each export answered, with what it carried. */
    received,
    release: () => {
      for (const res of held.splice(0)) answer(res, 200);
    },
    /** Answer every export from now on with `code`. */
    answerWith: (code: number) => {
      status = code;
      for (const res of held.splice(0)) answer(res, code);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const settingsFor = (url: string): ExportSettings => ({
  url,
  protocol: "http/json",
  headers: {},
  serviceName: "brain-test",
  resource: {},
  sampler: { kind: "parentbased_always_on" },
  // a batch goes out as soon as two spans have ended; four wait at most
  maxQueueSize: 4,
  maxExportBatchSize: 2,
  scheduledDelayMs: 60_000,
  exportTimeoutMs: 30_000,
  requestTimeoutMs: 30_000,
  failurePause: { firstMs: 200, maxMs: 200 },
});

const clientSpan = (traceFlags: number): SpanContext => ({
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags,
  isRemote: true,
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("gave up waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("tracing while the collector cannot take spans", () => {
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  let tracing: Tracing | undefined;
  afterEach(async () => {
    collector?.answerWith(200);
    await tracing?.shutdown();
    await collector?.close();
  });

  it("records no span the queue would drop, keeps its trace and sampling, and records again once a batch leaves", async () => {
    collector = await startCollector();
    tracing = createTracing(settingsFor(collector.url), createLogger("silent"));
    const turn = tracing.start("turn", clientSpan(1));
    // two spans make a batch, which goes out and hangs; four more fill the queue behind it
    for (let index = 0; index < 6; index++) tracing.start("store append", turn).end();
    await until(() => collector?.held.length === 1);

    expect(tracing.recording).toBe(false);
    const dropped = tracing.start("store append", turn);
    expect(dropped.isRecording()).toBe(false);
    expect(dropped.spanContext()).toMatchObject({ traceId: clientSpan(1).traceId, traceFlags: 1 });
    expect(dropped.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(dropped.spanContext().spanId).not.toBe(turn.spanContext().spanId);
    const root = tracing.start("turn", undefined);
    expect(root.isRecording()).toBe(false);
    expect(root.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.spanContext().traceId).not.toBe(clientSpan(1).traceId);
    // the sampler still decides: a client's trace that is not sampled stays so
    expect(tracing.start("turn", clientSpan(0)).spanContext().traceFlags).toBe(0);

    // the collector answers: the next batch leaves the queue, and there is room again
    collector.release();
    await until(() => collector?.held.length === 1);
    expect(tracing.start("store append", turn).isRecording()).toBe(true);
  });

  it("records nothing for a pause after the collector answers 500, still carrying the trace, and exports again once it answers", async () => {
    collector = await startCollector();
    collector.answerWith(500);
    const pausedTracing = createTracing(settingsFor(collector.url), createLogger("silent"));
    tracing = pausedTracing;
    const turn = pausedTracing.start("turn", clientSpan(1));
    pausedTracing.start("failed", turn).end();
    pausedTracing.start("failed", turn).end();
    // a span started but never ended joins no batch: a probe of whether Brain records now
    const recordsNow = () => pausedTracing.start("probe", turn).isRecording();
    await until(() => !recordsNow());
    expect(pausedTracing.recording).toBe(false);
    expect(collector.received.map(({ status }) => status)).toEqual([500]);

    const paused = pausedTracing.start("tool call", turn);
    expect(paused.spanContext()).toMatchObject({ traceId: clientSpan(1).traceId, traceFlags: 1 });
    expect(paused.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    paused.end();

    collector.answerWith(200);
    await until(recordsNow);
    expect(pausedTracing.recording).toBe(true);
    pausedTracing.start("exported", turn).end();
    pausedTracing.start("exported", turn).end();
    await until(() => collector?.received.length === 2);
    const [, exported] = collector.received;
    expect(exported?.status).toBe(200);
    // the batch after the pause holds what ended after it, nothing from during it
    expect(exported?.body).toContain('"name":"exported"');
    expect(exported?.body).not.toContain('"name":"tool call"');
  });
});
