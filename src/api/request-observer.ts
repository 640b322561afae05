import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import { parseTraceparent } from "../telemetry/trace-context.js";

/**
 * The trace and span ids of the client's `traceparent`, as a log line's fields, when it sent one:
 * the request runs inside the client's span, so its line names that span, as a turn's lines name
 * the turn's.
 */
export function clientTrace(req: IncomingMessage): { trace_id?: string; span_id?: string } {
  const trace = parseTraceparent(req.headers.traceparent);
  return trace ? { trace_id: trace.traceId, span_id: trace.spanId } : {};
}

/**
 * Counts and logs a request once, when its response closes. 'close' comes whether the response
 * finished or was cut short (a client that left an event stream, or left mid-request); 'finish'
 * only in the first case, which would leave those requests uncounted.
 */
export function observeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { logger: Logger; metrics: Metrics },
): { route: (template: string) => void } {
  // the route's template, never its path: a path carries session and call ids
  let route = "(none)";
  const started = performance.now();
  res.once("close", () => {
    const aborted = !res.writableFinished;
    // a response cut short before its head was written has no status
    const status = res.headersSent ? res.statusCode : undefined;
    deps.metrics.httpRequests.inc({ method: req.method ?? "", route, status: status ?? "none" });
    if (!deps.logger.isLevelEnabled("debug")) return;
    deps.logger.debug(
      {
        method: req.method,
        route,
        ...(status !== undefined && { status }),
        ...(aborted && { aborted }),
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
        ...clientTrace(req),
      },
      "request",
    );
  });
  return {
    route: (template) => {
      route = template;
    },
  };
}
