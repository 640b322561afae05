import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { TallyCounter, TallyHistogram } from "./tallies.js";

/**
 * Brain's Prometheus metrics, on a registry of their own so two Brains in one process (tests,
 * benchmarks) do not share counters. Labels are route templates, tool names and outcome codes:
 * never ids, keys or tokens. What a request or a tool call counts is a tally (tallies.ts), the rest
 * prom-client's own.
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
    httpRequests: new TallyCounter<"method" | "route" | "status">(
      "brain_http_requests_total",
      "HTTP requests by route template and status.",
      ["method", "route", "status"],
      registry,
    ),
    toolCalls: new TallyCounter<"tool" | "outcome">(
      "brain_tool_calls_total",
      "Tool calls by tool and outcome (ok, tool_error, or an error code of docs/protocol.md).",
      ["tool", "outcome"],
      registry,
    ),
    toolCallSeconds: new TallyHistogram<"tool">(
      "brain_tool_call_duration_seconds",
      "Tool call wall time, from the request to the result.",
      ["tool"],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 300],
      registry,
    ),
    toolCallsInFlight: new Gauge({
      name: "brain_tool_calls_in_flight",
      help: "Tool call requests sent and not yet answered.",
      registers: [registry],
    }),
    modelCalls: new TallyCounter<"model" | "provider" | "outcome">(
      "brain_model_calls_total",
      "Model calls by model entry, provider and outcome (ok, cancelled, or a turn.failed code of docs/protocol.md).",
      ["model", "provider", "outcome"],
      registry,
    ),
    modelCallSeconds: new TallyHistogram<"model" | "provider">(
      "brain_model_call_duration_seconds",
      "Model call wall time, retries included.",
      ["model", "provider"],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registry,
    ),
    modelTokens: new TallyCounter<"model" | "provider" | "type">(
      "brain_model_tokens_total",
      "Tokens the model calls used, by model entry and type (input or output).",
      ["model", "provider", "type"],
      registry,
    ),
    turns: new Counter({
      name: "brain_turns_total",
      help: "Turns by how they ended: completed, interrupted, failed (a turn ended after its Brain stopped among them) or crashed.",
      labelNames: ["end"] as const,
      registers: [registry],
    }),
    tenantLimited: new Counter({
      name: "brain_tenant_limited_total",
      help: "Requests refused with 429 by tenant (a host config name) and limit (requests_per_second, max_concurrent_turns, max_event_streams).",
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
      help: "Turn wall time by how it ended: from its start, or for a turn picked up waiting for approval, from then.",
      labelNames: ["end"] as const,
      buckets: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers: [registry],
    }),
    storeAppendSeconds: new TallyHistogram(
      "brain_store_append_duration_seconds",
      "Time for the store to commit an append of events.",
      [],
      [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
      registry,
    ),
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
    sseBytes: new TallyCounter(
      "brain_sse_bytes_total",
      "Bytes written to event-stream clients.",
      [],
      registry,
    ),
    readings,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
