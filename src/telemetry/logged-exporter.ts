import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "./logger.js";

/**
 * An exporter that says when exporting starts failing, once, and when it works again, once: a
 * collector that is down for an hour is two log lines, not one per batch. The batches that fail
 * are dropped by the batch processor; nothing waits on them.
 */
export class LoggedExporter implements SpanExporter {
  #failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
    /** Where spans go, for the log; it names no header, so no collector key. */
    private readonly url: string,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.#failing) this.logger.info({ otlp_url: this.url }, "exporting traces again");
        this.#failing = false;
      } else if (!this.#failing) {
        this.#failing = true;
        this.logger.warn(
          { otlp_url: this.url, reason: result.error?.message ?? "unknown" },
          "could not export traces; spans are dropped until the collector answers (logged once)",
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
