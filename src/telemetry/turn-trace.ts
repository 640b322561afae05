import type { NewEvent, StoredEvent } from "../../protocol/events.js";
import type { Logger } from "./logger.js";
import { parseTraceparent, traceparentOf } from "./trace-context.js";
import { type Span, type SpanContext, SpanKind, SpanStatusCode, type Tracing } from "./tracing.js";

/** How a turn's run in this process ended, for its span: a turn end, or why it stopped short. */
export type TurnRunEnd = "completed" | "interrupted" | "failed" | "left_waiting" | "crashed";

/**
 * The span of a turn's run in this process: under the client's span for a turn a message started,
 * under the turn's first span (stored with `turn.started`) for a turn picked up after a restart or
 * a takeover, so that the whole turn is one trace.
 */
export function startTurnSpan(
  tracing: Tracing,
  sessionId: string,
  parent: SpanContext | undefined,
  name: "turn" | "turn end" = "turn",
): Span {
  return tracing.start(name, parent, { "brain.session.id": sessionId }, SpanKind.INTERNAL);
}

/** The `turn.started` event of the turn whose span is `span`, naming it when it is in a trace. */
export function turnStarted(span: Span): NewEvent {
  const traceparent = traceparentOf(span.spanContext());
  return { type: "turn.started", data: traceparent ? { traceparent } : {} };
}

/** The span the session's last turn started under, as its `turn.started` stored it. */
export function storedTurnSpan(events: readonly StoredEvent[]): SpanContext | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index];
    if (event?.type === "turn.started") return parseTraceparent(event.data.traceparent);
  }
  return undefined;
}

export function endTurnSpan(span: Span, end: TurnRunEnd | string, failure?: string): void {
  if (span.isRecording()) {
    span.setAttribute("brain.turn.end", end);
    if (failure !== undefined || end === "crashed") {
      span.setAttribute("error.type", failure ?? end);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure ?? end });
    }
  }
  span.end();
}

/** The logger for a turn's lines: with its trace and span ids, where it is in a trace. */
export function turnLogger(logger: Logger, span: Span): Logger {
  const context = span.spanContext();
  return traceparentOf(context)
    ? logger.child({ trace_id: context.traceId, span_id: context.spanId })
    : logger;
}
