import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type FailurePause, RecordingGate } from "./recording-gate.js";

/** An exporter standing for the collector: it keeps each batch until the test answers it. */
class AnsweredExporter implements SpanExporter {
  readonly batches: ReadableSpan[][] = [];
  readonly #waiting: ((result: ExportResult) => void)[] = [];

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.batches.push(spans);
    this.#waiting.push(done);
  }

  /** Answer every batch still waiting, then let the processor go on. */
  async answer(code: ExportResultCode): Promise<void> {
    for (const done of this.#waiting.splice(0)) done({ code });
    await vi.advanceTimersByTimeAsync(0);
  }

  async shutdown(): Promise<void> {}
}

/** The gate stays closed until `ms` from now, and opens then. */
async function reopensIn(gate: RecordingGate, ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(gate.open).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(gate.open).toBe(true);
}

/** The gate around a real batch processor: a batch leaves at two ended spans, four fill the queue. */
function gated(pause: FailurePause = { firstMs: 1000, maxMs: 4000 }, overdueMs = 500, probeSpans = 64) {
  const exporter = new AnsweredExporter();
  const gate = new RecordingGate(4, pause, overdueMs, probeSpans);
  const processor = new BatchSpanProcessor(gate.exporter(exporter), {
    maxQueueSize: 4,
    maxExportBatchSize: 2,
    scheduledDelayMillis: 60_000,
  });
  const provider = new BasicTracerProvider({ spanProcessors: [gate.processor(processor)] });
  const tracer = provider.getTracer("test");
  return {
    gate,
    exporter,
    processor,
    end: (count: number, traceFlags = TraceFlags.SAMPLED) => {
      const parent = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceFlags,
      });
      for (let index = 0; index < count; index++) tracer.startSpan("span", {}, parent).end();
    },
  };
}

describe("RecordingGate", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("closes while the processor's queue is full and opens when an export takes a batch", async () => {
    const { gate, exporter, end } = gated();
    end(2);
    expect(exporter.batches).toHaveLength(1);
    end(3);
    expect(gate.open).toBe(true);
    // spans nobody samples never join the queue
    end(5, TraceFlags.NONE);
    expect(gate.open).toBe(true);
    end(1);
    expect(gate.open).toBe(false);
    // dropped by the processor, and not counted either
    end(2);
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(exporter.batches).toHaveLength(2);
    expect(gate.open).toBe(true);
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(exporter.batches).toHaveLength(3);
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(exporter.batches.map((batch) => batch.length)).toEqual([2, 2, 2]);
    expect(gate.open).toBe(true);
  });

  it("stays closed for a pause after a failed export, twice as long after each next failure up to the most, and from the first again after one that works", async () => {
    const { gate, exporter, end } = gated({ firstMs: 1000, maxMs: 4000 });
    const closedFor = async (ms: number) => {
      end(2);
      await exporter.answer(ExportResultCode.FAILED);
      expect(gate.open).toBe(false);
      await reopensIn(gate, ms);
    };
    await closedFor(1000);
    await closedFor(2000);
    await closedFor(4000);
    await closedFor(4000);
    end(2);
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(gate.open).toBe(true);
    await closedFor(1000);
  });

  it("pauses once for batches that fail together", async () => {
    const { gate, exporter, processor, end } = gated({ firstMs: 1000, maxMs: 4000 });
    end(4);
    // the second batch goes out beside the first, which has not been answered
    const flushed = processor.forceFlush().catch(() => "failed");
    expect(exporter.batches).toHaveLength(2);
    await exporter.answer(ExportResultCode.FAILED);
    expect(await flushed).toBe("failed");
    await vi.advanceTimersByTimeAsync(1000);
    expect(gate.open).toBe(true);
    // the next failure doubles the first pause, not a second one
    end(2);
    await exporter.answer(ExportResultCode.FAILED);
    await reopensIn(gate, 2000);
  });

  it("closes while an export is unanswered past its time, as the exporter retries a collector that is down", async () => {
    const { gate, exporter, end } = gated({ firstMs: 1000, maxMs: 4000 }, 500);
    end(2);
    await vi.advanceTimersByTimeAsync(499);
    expect(gate.open).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(gate.open).toBe(false);
    // answered at last: open again at once when it worked
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(gate.open).toBe(true);
    // an export answered in time never closes it
    end(2);
    await exporter.answer(ExportResultCode.SUCCESS);
    await vi.advanceTimersByTimeAsync(5000);
    expect(gate.open).toBe(true);
    // and one that fails after its retries pauses from its answer on, as any failure does
    end(2);
    await vi.advanceTimersByTimeAsync(3000);
    expect(gate.open).toBe(false);
    await exporter.answer(ExportResultCode.FAILED);
    await reopensIn(gate, 1000);
  });

  it("after a pause records only a probe's spans until an export works again", async () => {
    const { gate, exporter, end } = gated({ firstMs: 1000, maxMs: 4000 }, 500, 3);
    end(2);
    await exporter.answer(ExportResultCode.FAILED);
    await vi.advanceTimersByTimeAsync(1000);
    expect(gate.open).toBe(true);
    end(2);
    expect(gate.open).toBe(true);
    end(1);
    expect(gate.open).toBe(false);
    // the probe failed too: a longer pause, then a probe's worth again
    await exporter.answer(ExportResultCode.FAILED);
    await reopensIn(gate, 2000);
    end(3);
    expect(gate.open).toBe(false);
    // the collector is back: every span again, past the probe's count
    await exporter.answer(ExportResultCode.SUCCESS);
    expect(gate.open).toBe(true);
    end(2);
    await exporter.answer(ExportResultCode.SUCCESS);
    end(2);
    expect(gate.open).toBe(true);
  });

  it("drops a batch handed over during a pause without sending it", async () => {
    const { gate, exporter, processor, end } = gated();
    end(3);
    expect(exporter.batches).toHaveLength(1);
    await exporter.answer(ExportResultCode.FAILED);
    expect(gate.open).toBe(false);
    // the span recorded before the failure leaves the queue, but not for the collector
    expect(await processor.forceFlush().catch(() => "failed")).toBe("failed");
    expect(exporter.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    end(2);
    expect(exporter.batches).toHaveLength(2);
  });
});
