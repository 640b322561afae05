import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Brain's Prometheus metrics, on a registry of their own so two Brains in one process (tests,
 * benchmarks) do not share counters. Labels are route templates, tool names and outcome codes:
 * never ids, keys or tokens.
 */
export function createMetrics() {
  const registry = new Registry();
  // under the names every Node dashboard looks for: process_cpu_seconds_total, nodejs_heap_size_used_bytes …
  collectDefaultMetrics({ register: registry });
  // gauges named as counters are, which Prometheus' lint refuses (promtool check metrics); the
  // gauges of the same name without _total hold the same counts by type: sum them for the total
  for (const kind of ["handles", "requests", "resources"])
    registry.removeSingleMetric(`nodejs_active_${kind}_total`);
  return {
    registry,
    httpRequests: new Counter({
      name: "brain_http_requests_total",
      help: "HTTP requests by route template and status.",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: "brain_tool_calls_total",
      help: "Tool calls by tool and outcome (ok, tool_error, or an error code of docs/protocol.md).",
      labelNames: ["tool", "outcome"] as const,
      registers: [registry],
    }),
    toolCallSeconds: new Histogram({
      name: "brain_tool_call_duration_seconds",
      help: "Tool call wall time, from the request to the result.",
      labelNames: ["tool"] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 300],
      registers: [registry],
    }),
    turns: new Counter({
      name: "brain_turns_total",
      help: "Turns by how they ended.",
      labelNames: ["end"] as const,
      registers: [registry],
    }),
    tenantLimited: new Counter({
      name: "brain_tenant_limited_total",
      help: "Requests refused with 429 by tenant (a host config name) and limit (requests_per_second, max_concurrent_turns).",
      labelNames: ["tenant", "limit"] as const,
      registers: [registry],
    }),
    compactions: new Counter({
      name: "brain_context_compactions_total",
      help: "Conversations compacted to fit a model's context window, by model entry and strategy.",
      labelNames: ["model", "strategy"] as const,
      registers: [registry],
    }),
    compactionTokens: new Counter({
      name: "brain_context_compaction_tokens_total",
      help: "Tokens the summarising model calls of compactions used, by model entry and kind (input, output).",
      labelNames: ["model", "kind"] as const,
      registers: [registry],
    }),
    sseClients: new Gauge({
      name: "brain_sse_clients",
      help: "Connected event-stream clients.",
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
