import { ModelError, type ModelProvider } from "../models/provider.js";
import type { Metrics } from "./metrics.js";
import type { CounterCell, HistogramCell } from "./tallies.js";
import { type Span, SpanKind, SpanStatusCode, startUnsentSpan, type Tracing } from "./tracing.js";

export interface ModelEntryLabels {
  /** The model entry's name in the host config: what a session names, a bounded set. */
  name: string;
  /** `anthropic`, `openai` or `scripted`. */
  provider: string;
  /** The provider's model, as sent (`claude-sonnet-4-5`); the entry's name for the scripted model. */
  model: string;
}

/**
 * The turn's model calls, each a span under the turn's (the GenAI semantic conventions'
 * attributes: https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/), counted and timed
 * by model entry and outcome, with the tokens they used.
 */
export function tracedModel(
  provider: ModelProvider,
  entry: ModelEntryLabels,
  parent: Span,
  tracing: Tracing,
  metrics: Metrics,
): ModelProvider {
  const { labels, tokensIn, tokensOut, seconds, succeeded } = cellsOf(metrics, entry);
  return {
    // a replaying model's recorded compactions are the wrapped model's own. The property is there
    // (undefined) for a model without them too: a literal of one shape has one map, which its
    // boilerplate keeps alive, where one spread in anew each turn got a map V8 could drop between
    // turns, and the turn loop reading it was deoptimized (BENCHMARKS.md, "Arrays of one kind")
    recordedCompaction: provider.recordedCompaction?.bind(provider),
    complete: async (request) => {
      const span = startUnsentSpan(
        tracing,
        `chat ${entry.model}`,
        parent,
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.system": entry.provider,
          "gen_ai.request.model": entry.model,
        },
        SpanKind.CLIENT,
      );
      const started = performance.now();
      let outcome = "ok";
      try {
        const reply = await provider.complete(
          span.isRecording()
            ? {
                ...request,
                onRetry: (attempt, code, waitMs) => {
                  span.addEvent("retry", { attempt, "error.type": code, "brain.retry.wait_ms": waitMs });
                  request.onRetry?.(attempt, code, waitMs);
                },
              }
            : request,
        );
        tokensIn.inc(reply.usage.input_tokens);
        tokensOut.inc(reply.usage.output_tokens);
        if (span.isRecording()) {
          span.setAttributes({
            "gen_ai.usage.input_tokens": reply.usage.input_tokens,
            "gen_ai.usage.output_tokens": reply.usage.output_tokens,
            "gen_ai.response.finish_reasons": [reply.stop_reason],
            ...(reply.response_id !== undefined && { "gen_ai.response.id": reply.response_id }),
          });
        }
        return reply;
      } catch (error) {
        outcome = request.signal.aborted
          ? "cancelled"
          : error instanceof ModelError
            ? error.code
            : "model_error";
        span.setAttribute("error.type", outcome);
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : outcome,
        });
        throw error;
      } finally {
        (outcome === "ok" ? succeeded : metrics.modelCalls.labels({ ...labels, outcome })).inc();
        seconds.observe((performance.now() - started) / 1000);
        span.end();
      }
    },
  };
}

/** The cells a model entry's calls count in at every call. */
interface ModelCallCells {
  labels: { model: string; provider: string };
  tokensIn: CounterCell;
  tokensOut: CounterCell;
  seconds: HistogramCell;
  succeeded: CounterCell;
}

/** Each model entry's cells, found once per metrics rather than at every turn. */
const cellsByMetrics = new WeakMap<Metrics, Map<string, ModelCallCells>>();

function cellsOf(metrics: Metrics, entry: ModelEntryLabels): ModelCallCells {
  let byEntry = cellsByMetrics.get(metrics);
  if (!byEntry) {
    byEntry = new Map();
    cellsByMetrics.set(metrics, byEntry);
  }
  const key = `${entry.name}\u0000${entry.provider}`;
  let cells = byEntry.get(key);
  if (!cells) {
    const labels = { model: entry.name, provider: entry.provider };
    cells = {
      labels,
      tokensIn: metrics.modelTokens.labels({ ...labels, type: "input" }),
      tokensOut: metrics.modelTokens.labels({ ...labels, type: "output" }),
      seconds: metrics.modelCallSeconds.labels(labels),
      succeeded: metrics.modelCalls.labels({ ...labels, outcome: "ok" }),
    };
    byEntry.set(key, cells);
  }
  return cells;
}
