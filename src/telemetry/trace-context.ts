import { randomBytes } from "node:crypto";

/** A W3C trace context (https://www.w3.org/TR/trace-context/): the trace a request belongs to. */
export interface TraceContext {
  traceId: string;
  parentId: string;
  flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/** Parse a `traceparent` header; anything malformed, all-zero or of version ff is no trace. */
export function parseTraceparent(header: string | string[] | undefined): TraceContext | undefined {
  if (typeof header !== "string") return undefined;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags] = match as unknown as [string, string, string, string, string];
  if (version === "ff" || /^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  // version 00 allows nothing after the flags
  if (version === "00" && header.trim().length !== 55) return undefined;
  return { traceId, parentId, flags };
}

/** The `traceparent` of a child operation (a tool call) of `trace`: same trace, a new span id. */
export function childTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${randomBytes(8).toString("hex")}-${trace.flags}`;
}
