import { TraceFlags } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** How long Brain records no span after a failed export: doubling from `firstMs` to `maxMs`. */
export interface FailurePause {
  firstMs: number;
  maxMs: number;
}

/**
 * Whether a span started now could reach the collector, so that Brain records only those
 * (tracing.ts): a turn pays for carrying its trace, not for spans nobody gets. Three things close it:
 *
 * - the batch processor's queue is full, counted as the processor counts it: a sampled span joins
 *   at its end unless the queue is full (the processor drops it then), and leaves when an export
 *   takes it, whether that export works or not;
 * - an export failed (a collector that is down, or answers 500): no span is recorded for a
 *   pause (export-settings.ts: 5 s after a first failure), twice as long after each failure
 *   that follows, up to a most (30 s); an export that works ends the doubling. After a pause
 *   only `probeSpans` are recorded until an export works again: they are the batch that finds
 *   whether the collector is back, and a collector still down costs a few spans a pause, not
 *   every span of the seconds its exporter spends retrying. A batch the processor hands over
 *   during a pause (spans recorded before the failure) is dropped, neither encoded nor sent;
 * - an export is still unanswered after `overdueMs`: a collector answers a batch in
 *   milliseconds, but the exporter retries a refused or timed-out connection for up to its
 *   timeout (10 s) before it reports the failure, and every span recorded meanwhile would only
 *   wait in the queue for the same collector. Closed until that export ends.
 */
export class RecordingGate {
  #queued = 0;
  /** Exports out for longer than `overdueMs`. */
  #overdue = 0;
  #paused = false;
  /** Since a failed export, until one works: spans recorded since the last pause ended. */
  #probed: number | undefined;
  #nextPauseMs: number;
  #pauseTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly capacity: number,
    private readonly pause: FailurePause,
    private readonly overdueMs = 1000,
    private readonly probeSpans = 64,
  ) {
    this.#nextPauseMs = pause.firstMs;
  }

  get open(): boolean {
    return (
      !this.#paused &&
      this.#overdue === 0 &&
      this.#queued < this.capacity &&
      (this.#probed === undefined || this.#probed < this.probeSpans)
    );
  }

  /** `inner`, the batch processor, with what joins its queue counted. */
  processor(inner: SpanProcessor): SpanProcessor {
    return {
      onStart: (span, context) => inner.onStart(span, context),
      onEnd: (span) => {
        // before the processor, which may export a batch from inside onEnd
        if (span.spanContext().traceFlags & TraceFlags.SAMPLED && this.#queued < this.capacity) {
          this.#queued++;
          if (this.#probed !== undefined) this.#probed++;
        }
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
  }

  /** `inner`, the processor's exporter, with what leaves its queue counted and how it went. */
  exporter(inner: SpanExporter): SpanExporter {
    return {
      export: (spans, done) => {
        this.#queued -= spans.length;
        // recorded before the collector failed: not worth encoding and retrying for it now
        if (this.#paused) {
          done({ code: ExportResultCode.FAILED, error: new Error("dropped: the collector failed lately") });
          return;
        }
        let overdue = false;
        const overdueTimer = setTimeout(() => {
          overdue = true;
          this.#overdue++;
        }, this.overdueMs).unref();
        inner.export(spans, (result) => {
          clearTimeout(overdueTimer);
          if (overdue) this.#overdue--;
          this.#exported(result);
          done(result);
        });
      },
      shutdown: () => {
        clearTimeout(this.#pauseTimer);
        return inner.shutdown();
      },
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }

  #exported(result: ExportResult): void {
    if (result.code === ExportResultCode.SUCCESS) {
      this.#nextPauseMs = this.pause.firstMs;
      this.#probed = undefined;
      return;
    }
    // a batch that was already on its way when the pause began says nothing new
    if (this.#paused) return;
    this.#paused = true;
    this.#pauseTimer = setTimeout(() => {
      this.#paused = false;
      this.#probed = 0;
    }, this.#nextPauseMs).unref();
    this.#nextPauseMs = Math.min(this.#nextPauseMs * 2, this.pause.maxMs);
  }
}
