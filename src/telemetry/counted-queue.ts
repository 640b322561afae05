import { TraceFlags } from "@opentelemetry/api";
import type { SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/**
 * The spans waiting in a batch processor's queue, counted as it counts them: a sampled span joins
 * at its end unless the queue is full (the processor drops it then), and leaves when an export
 * takes it, whether that export works or not. A span started while the queue is full would most
 * likely be dropped at its end, so Brain does not record it (tracing.ts): while the collector is
 * down the queue stays full, and a turn pays for carrying its trace, not for spans nobody gets.
 */
export class CountedQueue {
  #queued = 0;

  constructor(private readonly capacity: number) {}

  get full(): boolean {
    return this.#queued >= this.capacity;
  }

  /** `inner`, the batch processor, with what joins its queue counted. */
  processor(inner: SpanProcessor): SpanProcessor {
    return {
      onStart: (span, context) => inner.onStart(span, context),
      onEnd: (span) => {
        // before the processor, which may export a batch from inside onEnd
        if (span.spanContext().traceFlags & TraceFlags.SAMPLED && !this.full) this.#queued++;
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
  }

  /** `inner`, the processor's exporter, with what leaves its queue counted. */
  exporter(inner: SpanExporter): SpanExporter {
    return {
      export: (spans, done) => {
        this.#queued = Math.max(0, this.#queued - spans.length);
        inner.export(spans, done);
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }
}
