import type { ToolCaller } from "../tools/dispatch.js";
import type { Metrics } from "./metrics.js";
import { type Span, SpanKind, SpanStatusCode, type Tracing } from "./tracing.js";

/**
 * The turn's tool calls, each a span under the turn's whose id is the one the tool service gets in
 * its `traceparent`, and counted while in flight.
 */
export function tracedTools(tools: ToolCaller, parent: Span, tracing: Tracing, metrics: Metrics): ToolCaller {
  return {
    call: async (request) => {
      // the binding's name, never the model's: a span name is a low-cardinality thing
      const tool = request.binding?.name ?? "(unknown)";
      const span = tracing.start(
        `execute_tool ${tool}`,
        parent,
        {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": request.name,
          "gen_ai.tool.call.id": request.callId,
        },
        SpanKind.CLIENT,
      );
      metrics.toolCallsInFlight.inc();
      try {
        const result = await tools.call(request, span);
        if (span.isRecording()) {
          const outcome = result.error?.code ?? (result.is_error ? "tool_error" : "ok");
          span.setAttribute("brain.tool.outcome", outcome);
          if (result.unknown_outcome !== undefined)
            span.setAttribute("brain.tool.unknown_outcome", result.unknown_outcome);
          if (outcome !== "ok") {
            span.setAttribute("error.type", outcome);
            span.setStatus({ code: SpanStatusCode.ERROR, message: result.error?.message ?? outcome });
          }
        }
        return result;
      } finally {
        metrics.toolCallsInFlight.dec();
        span.end();
      }
    },
  };
}
