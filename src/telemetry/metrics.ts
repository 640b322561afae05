import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Brain's Prometheus metrics, on a registry of their own so two Brains in one process (tests,
 * benchmarks) do not share counters. Labels are route templates, tool names and outcome codes:
 * never ids, keys or tokens.
 */
export function createMetrics() {
  const registry = new Registry();
  /** What the gauges read when scraped, set once the parts they read exist. */
  const readings = { leasesHeld: () => 0 };
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
    toolCallsInFlight: new Gauge({
      name: "brain_tool_calls_in_flight",
      help: "Tool call requests sent and not yet answered.",
      registers: [registry],
    }),
    modelCalls: new Counter({
      name: "brain_model_calls_total",
      help: "Model calls by model entry, provider and outcome (ok, cancelled, or a turn.failed code of docs/protocol.md).",
      labelNames: ["model", "provider", "outcome"] as const,
      registers: [registry],
    }),
    modelCallSeconds: new Histogram({
      name: "brain_model_call_duration_seconds",
      help: "Model call wall time, retries included.",
      labelNames: ["model", "provider"] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    }),
    modelTokens: new Counter({
      name: "brain_model_tokens_total",
      help: "Tokens the model calls used, by model entry and type (input or output).",
      labelNames: ["model", "provider", "type"] as const,
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
    turnSeconds: new Histogram({
      name: "brain_turn_duration_seconds",
      help: "Turn wall time in this process, by how it ended (a turn picked up after a restart counts from then).",
      labelNames: ["end"] as const,
      buckets: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers: [registry],
    }),
    storeAppendSeconds: new Histogram({
      name: "brain_store_append_duration_seconds",
      help: "Time for the store to commit an append of events.",
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    leasesHeld: new Gauge({
      name: "brain_turn_leases_held",
      help: "Turns this process holds the lease of (runs).",
      registers: [registry],
      collect() {
        this.set(readings.leasesHeld());
      },
    }),
    sseClients: new Gauge({
      name: "brain_sse_clients",
      help: "Connected event-stream clients.",
      registers: [registry],
    }),
    sseBytes: new Counter({
      name: "brain_sse_bytes_total",
      help: "Bytes written to event-stream clients.",
      registers: [registry],
    }),
    readings,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
