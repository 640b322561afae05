import {
  type Attributes,
  type Context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  ROOT_CONTEXT,
  SamplingDecision,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { ExportSettings, SamplerSetting } from "./export-settings.js";
import { LoggedExporter } from "./logged-exporter.js";
import type { Logger } from "./logger.js";
import { RecordingGate } from "./recording-gate.js";

export { type Span, type SpanContext, SpanKind, SpanStatusCode } from "@opentelemetry/api";

/** How long stopping Brain waits for the last spans to reach a collector. */
const SHUTDOWN_WAIT_MS = 5000;

/**
 * Brain's spans. Exported over OTLP/HTTP in batches when an endpoint is set; otherwise every span is
 * a no-op that costs nothing but, under a client's trace, a span id, so a tool service still gets
 * the client's trace in its `traceparent`.
 */
export interface Tracing {
  /**
   * Whether a span started now may be recorded: never when nothing is exported, nor while the
   * collector cannot take spans (recording-gate.ts).
   */
  readonly recording: boolean;
  /** A span under `parent` (a span of ours or the client's), or a trace of its own without one. */
  start(name: string, parent: Span | SpanContext | undefined, attributes?: Attributes, kind?: SpanKind): Span;
  /** Export what is queued, for at most a few seconds, and stop. */
  shutdown(): Promise<void>;
}

const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
/** The SDK's ids, for the spans Brain makes without it (outside an export, or while the gate is closed). */
const ids = new RandomIdGenerator();

export const untraced: Tracing = {
  recording: false,
  start: (_name, parent) => {
    // a turn outside any trace: every span of its calls is no span either
    if (parent === undefined || parent === NO_SPAN) return NO_SPAN;
    const context = "spanContext" in parent ? parent.spanContext() : parent;
    return isSpanContextValid(context)
      ? trace.wrapSpanContext({
          traceId: context.traceId,
          spanId: ids.generateSpanId(),
          traceFlags: context.traceFlags,
        })
      : NO_SPAN;
  },
  shutdown: async () => undefined,
};

/**
 * The context a child of `parent` starts in, made once per parent: a turn's span is the parent of
 * every span of its calls and appends.
 */
const parentContexts = new WeakMap<Span | SpanContext, Context>();
function contextOf(parent: Span | SpanContext | undefined): Context {
  if (!parent) return ROOT_CONTEXT;
  let context = parentContexts.get(parent);
  if (!context) {
    context =
      "spanContext" in parent
        ? trace.setSpan(ROOT_CONTEXT, parent)
        : trace.setSpanContext(ROOT_CONTEXT, parent);
    parentContexts.set(parent, context);
  }
  return context;
}

/** Tracing as `settings` say: off without them. */
export function createTracing(settings: ExportSettings | undefined, logger: Logger): Tracing {
  if (!settings) return untraced;
  // protobuf by default, as the specification says: it encodes in about a third of JSON's time
  // (BENCHMARKS.md) and a collector takes either
  const OTLPTraceExporter = settings.protocol === "http/json" ? JsonTraceExporter : ProtobufTraceExporter;
  const exporter = new LoggedExporter(
    new OTLPTraceExporter({
      url: settings.url,
      headers: settings.headers,
      timeoutMillis: settings.requestTimeoutMs,
    }),
    logger,
    settings.url,
  );
  const sampler = samplerOf(settings.sampler);
  const gate = new RecordingGate(settings.maxQueueSize, settings.failurePause);
  // the provider is Brain's own, not registered globally: two Brains in one process (tests) keep apart
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...settings.resource, "service.name": settings.serviceName }),
    sampler,
    spanProcessors: [
      gate.processor(
        new BatchSpanProcessor(gate.exporter(exporter), {
          maxQueueSize: settings.maxQueueSize,
          maxExportBatchSize: settings.maxExportBatchSize,
          scheduledDelayMillis: settings.scheduledDelayMs,
          exportTimeoutMillis: settings.exportTimeoutMs,
        }),
      ),
    ],
  });
  const tracer: Tracer = provider.getTracer("brain");
  return {
    get recording() {
      return gate.open;
    },
    start: (name, parent, attributes, kind = SpanKind.INTERNAL) => {
      const context = contextOf(parent);
      if (gate.open) return tracer.startSpan(name, { kind, ...(attributes && { attributes }) }, context);
      // it would not reach the collector: the ids and sampling it would have had, unrecorded
      const parentContext = trace.getSpanContext(context);
      // a child of a span of ours is sampled as its parent was: every sampler Brain offers decides
      // all of a trace's spans alike (by the parent, or by the trace id, or always the same)
      if (parent && "spanContext" in parent && parentContext && isSpanContextValid(parentContext))
        return trace.wrapSpanContext({
          traceId: parentContext.traceId,
          spanId: ids.generateSpanId(),
          traceFlags: parentContext.traceFlags,
        });
      const traceId =
        parentContext && isSpanContextValid(parentContext) ? parentContext.traceId : ids.generateTraceId();
      const { decision } = sampler.shouldSample(context, traceId, name, kind, attributes ?? {}, []);
      return trace.wrapSpanContext({
        traceId,
        spanId: ids.generateSpanId(),
        traceFlags: decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      });
    },
    shutdown: async () => {
      let waited: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timed out">((resolve) => {
        waited = setTimeout(() => resolve("timed out"), SHUTDOWN_WAIT_MS);
      });
      const ended = await Promise.race([provider.shutdown().catch(() => undefined), timedOut]);
      clearTimeout(waited);
      if (ended === "timed out")
        logger.warn(
          { otlp_url: settings.url },
          "stopped without exporting the last spans: the collector is slow",
        );
    },
  };
}

/**
 * `work` in a span of its own under `parent`, which records its failure; when the span would record
 * nothing (nothing is exported, the turn is not sampled, the collector cannot take it), just `work`,
 * with no promise of its own around it (a turn's every append goes through here), and while nothing
 * can be recorded not even started.
 */
export function inSpan<T>(
  tracing: Tracing,
  name: string,
  parent: Span,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  const span = startUnsentSpan(tracing, name, parent, attributes);
  return span.isRecording() ? inRecordedSpan(span, work) : work();
}

/**
 * A span whose id is sent to no one (an append's, a model call's: a tool call's goes to the
 * service in its `traceparent`), started only while it could be recorded, else the no-op span.
 */
export function startUnsentSpan(
  tracing: Tracing,
  name: string,
  parent: Span,
  attributes: Attributes,
  kind?: SpanKind,
): Span {
  return tracing.recording ? tracing.start(name, parent, attributes, kind) : NO_SPAN;
}

async function inRecordedSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    span.end();
  }
}

function samplerOf(setting: SamplerSetting): Sampler {
  switch (setting.kind) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(setting.ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setting.ratio) });
  }
}
