import { percentDecoded } from "../../runtime/percent-decoding.js";
import type { FailurePause } from "./recording-gate.js";

/**
 * Where and how Brain exports its traces, from the standard OpenTelemetry variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/) and the host
 * config's `telemetry.otlp_endpoint`. Undefined: tracing is off.
 */
export interface ExportSettings {
  /** The full OTLP/HTTP traces URL, `…/v1/traces`. */
  url: string;
  /** The OTLP/HTTP encoding: protobuf, the specification's default, or JSON. */
  protocol: ExportProtocol;
  /** Sent with every export (a collector's API key): never logged. */
  headers: Record<string, string>;
  serviceName: string;
  resource: Record<string, string>;
  sampler: SamplerSetting;
  /** Spans waiting for export past this are dropped: a dead collector costs memory up to here only. */
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMs: number;
  exportTimeoutMs: number;
  /** How long one export request may take, its retries included. */
  requestTimeoutMs: number;
  /** How long no span is recorded after a failed export (Brain's own: no standard variable sets it). */
  failurePause: FailurePause;
}

export type ExportProtocol = "http/protobuf" | "http/json";

export type SamplerSetting =
  | { kind: "always_on" | "always_off" | "parentbased_always_on" | "parentbased_always_off" }
  | { kind: "traceidratio" | "parentbased_traceidratio"; ratio: number };

const SAMPLERS = new Set([
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
]);

/** The specification's defaults, but for the service name, which is Brain's own. */
const DEFAULTS = {
  serviceName: "brain",
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMs: 5000,
  exportTimeoutMs: 30_000,
  requestTimeoutMs: 10_000,
  // as an OpenTelemetry Collector's exporters retry (retry_on_failure: 5 s, up to 30 s): a batch that
  // failed has had the exporter's own retries, so what failed it (a collector down, a key it
  // refuses) is seldom gone within a second
  failurePause: { firstMs: 5000, maxMs: 30_000 },
};

/**
 * The settings, or the problems that keep them from being read (Brain does not start with a
 * malformed variable rather than run without the traces its operator asked for).
 */
export function exportSettings(
  env: NodeJS.ProcessEnv,
  configEndpoint: string | undefined,
): { ok: true; settings: ExportSettings | undefined } | { ok: false; problems: string[] } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return { ok: true, settings: undefined };
  const problems: string[] = [];
  const url = tracesUrl(env, configEndpoint, problems);
  const number = (name: string, fallback: number, min: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min) return value;
    problems.push(`${name}: must be an integer of at least ${min}, not "${raw}"`);
    return fallback;
  };
  const settings: ExportSettings | undefined = url
    ? {
        url,
        protocol: protocol(env, problems),
        headers:
          keyValues(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", problems) ??
          keyValues(env, "OTEL_EXPORTER_OTLP_HEADERS", problems) ??
          {},
        serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULTS.serviceName,
        resource: keyValues(env, "OTEL_RESOURCE_ATTRIBUTES", problems) ?? {},
        sampler: sampler(env, problems),
        maxQueueSize: number("OTEL_BSP_MAX_QUEUE_SIZE", DEFAULTS.maxQueueSize, 1),
        maxExportBatchSize: number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", DEFAULTS.maxExportBatchSize, 1),
        scheduledDelayMs: number("OTEL_BSP_SCHEDULE_DELAY", DEFAULTS.scheduledDelayMs, 0),
        exportTimeoutMs: number("OTEL_BSP_EXPORT_TIMEOUT", DEFAULTS.exportTimeoutMs, 1),
        requestTimeoutMs: number(
          env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim()
            ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
            : "OTEL_EXPORTER_OTLP_TIMEOUT",
          DEFAULTS.requestTimeoutMs,
          1,
        ),
        failurePause: DEFAULTS.failurePause,
      }
    : undefined;
  if (settings && settings.maxExportBatchSize > settings.maxQueueSize) {
    problems.push(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${settings.maxExportBatchSize}) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${settings.maxQueueSize})`,
    );
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, settings };
}

/** The traces endpoint as the specification builds it: the signal's own URL as is, a base URL + v1/traces. */
function tracesUrl(env: NodeJS.ProcessEnv, configEndpoint: string | undefined, problems: string[]) {
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (own) return httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", own, problems);
  const [name, base] = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
    ? ["OTEL_EXPORTER_OTLP_ENDPOINT", env.OTEL_EXPORTER_OTLP_ENDPOINT.trim()]
    : ["telemetry.otlp_endpoint", configEndpoint];
  if (!base) return undefined;
  const checked = httpUrl(name, base, problems);
  return checked && `${checked.replace(/\/+$/, "")}/v1/traces`;
}

function httpUrl(name: string, value: string, problems: string[]): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return value;
  } catch {
    // reported below, as any other unusable value
  }
  problems.push(`${name}: must be an absolute http or https URL, not "${value}"`);
  return undefined;
}

/** A `key=value,key=value` list with URL-encoded values; values are never repeated in a problem (they may be keys). */
function keyValues(
  env: NodeJS.ProcessEnv,
  name: string,
  problems: string[],
): Record<string, string> | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const pairs: Record<string, string> = {};
  for (const item of raw.split(",")) {
    const at = item.indexOf("=");
    const key = item.slice(0, Math.max(at, 0)).trim();
    const value = percentDecoded(item.slice(at + 1).trim());
    if (at <= 0 || !key || value === undefined) {
      problems.push(`${name}: each entry must be key=value with a URL-encoded value`);
      return undefined;
    }
    pairs[key] = value;
  }
  return pairs;
}

function protocol(env: NodeJS.ProcessEnv, problems: string[]): ExportProtocol {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const value = env[name]?.trim().toLowerCase() || "http/protobuf";
  if (value === "http/protobuf" || value === "http/json") return value;
  problems.push(
    `${name}: must be http/protobuf or http/json (Brain exports over OTLP/HTTP, not gRPC), not "${value}"`,
  );
  return "http/protobuf";
}

function sampler(env: NodeJS.ProcessEnv, problems: string[]): SamplerSetting {
  const kind = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  if (!SAMPLERS.has(kind)) {
    problems.push(`OTEL_TRACES_SAMPLER: must be one of ${[...SAMPLERS].join(", ")}, not "${kind}"`);
    return { kind: "parentbased_always_on" };
  }
  if (kind !== "traceidratio" && kind !== "parentbased_traceidratio") return { kind } as SamplerSetting;
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : 1;
  if (!(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, not "${arg}"`);
    return { kind, ratio: 1 };
  }
  return { kind, ratio };
}
