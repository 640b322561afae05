import { INVALID_SPAN_CONTEXT, isSpanContextValid, type SpanContext } from "@opentelemetry/api";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/**
 * Parse a W3C `traceparent` header (https://www.w3.org/TR/trace-context/) into the span context it
 * names; anything malformed, all-zero or of version ff is no trace.
 */
export function parseTraceparent(header: string | string[] | undefined): SpanContext | undefined {
  if (typeof header !== "string") return undefined;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === "ff" || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  // version 00 allows nothing after the flags
  if (version === "00" && header.trim().length !== 55) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}

/** The `traceparent` that names `span`; undefined for a span of no trace. */
export function traceparentOf(span: SpanContext): string | undefined {
  // a call of an untraced turn has the very context of no trace: known without reading its ids
  // hex digit by hex digit, 0.9 k instructions of every call's (BENCHMARKS.md)
  if (span === INVALID_SPAN_CONTEXT || !isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}
