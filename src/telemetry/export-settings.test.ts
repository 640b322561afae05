import { describe, expect, it } from "vitest";
import { exportSettings } from "./export-settings.js";

const settingsOf = (env: NodeJS.ProcessEnv, configEndpoint?: string) => {
  const result = exportSettings(env, configEndpoint);
  if (!result.ok) throw new Error(result.problems.join("\n"));
  return result.settings;
};

const problemsOf = (env: NodeJS.ProcessEnv) => {
  const result = exportSettings(env, undefined);
  return result.ok ? [] : result.problems;
};

describe("export settings from the OpenTelemetry variables and the host config", () => {
  it("is off with neither an endpoint variable nor telemetry.otlp_endpoint", () => {
    expect(settingsOf({})).toBeUndefined();
    expect(settingsOf({ OTEL_SERVICE_NAME: "x" })).toBeUndefined();
  });

  it("adds v1/traces to a base endpoint, and takes the traces endpoint as it is", () => {
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })?.url).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/base/" })?.url).toBe(
      "http://collector:4318/base/v1/traces",
    );
    expect(
      settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/ingest",
      })?.url,
    ).toBe("https://traces.example/ingest");
  });

  it("takes telemetry.otlp_endpoint when no variable is set, and the variable over it", () => {
    expect(settingsOf({}, "http://127.0.0.1:4318")?.url).toBe("http://127.0.0.1:4318/v1/traces");
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318" }, "http://config:4318")?.url).toBe(
      "http://env:4318/v1/traces",
    );
  });

  it("is off when OTEL_SDK_DISABLED is true, whatever else is set", () => {
    expect(
      settingsOf({ OTEL_SDK_DISABLED: "TRUE", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
    ).toBeUndefined();
  });

  it("reads headers, service name, resource attributes, sampler and the batch limits", () => {
    expect(
      settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb,x-tenant = t1",
        OTEL_SERVICE_NAME: "brain-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_BSP_MAX_QUEUE_SIZE: "100",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "10",
        OTEL_BSP_SCHEDULE_DELAY: "0",
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "2000",
      }),
    ).toEqual({
      url: "http://c:4318/v1/traces",
      protocol: "http/protobuf",
      headers: { "api-key": "a,b", "x-tenant": "t1" },
      serviceName: "brain-eu",
      resource: { "deployment.environment": "prod" },
      sampler: { kind: "parentbased_traceidratio", ratio: 0.25 },
      maxQueueSize: 100,
      maxExportBatchSize: 10,
      scheduledDelayMs: 0,
      exportTimeoutMs: 30_000,
      requestTimeoutMs: 2000,
      failurePause: { firstMs: 5000, maxMs: 30_000 },
    });
  });

  it("names every malformed variable, and never repeats a header's value", () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "secret-value-without-a-key",
      OTEL_TRACES_SAMPLER: "sometimes",
    });
    expect(problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an absolute http or https URL, not "collector:4318"',
    ]);
    const more = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "secret-value-without-a-key",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_BSP_MAX_QUEUE_SIZE: "-1",
    });
    expect(more.map((problem) => problem.split(":")[0])).toEqual([
      "OTEL_EXPORTER_OTLP_HEADERS",
      "OTEL_TRACES_SAMPLER",
      "OTEL_BSP_MAX_QUEUE_SIZE",
    ]);
    expect(more.join("\n")).not.toContain("secret-value");
  });

  it("exports protobuf by default, JSON when asked, and refuses gRPC by name", () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(settingsOf(base)?.protocol).toBe("http/protobuf");
    expect(settingsOf({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })?.protocol).toBe("http/json");
    expect(
      settingsOf({
        ...base,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
      })?.protocol,
    ).toBe("http/protobuf");
    expect(problemsOf({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json (Brain exports over OTLP/HTTP, not gRPC), not "grpc"',
    ]);
  });

  it("refuses a sampler ratio outside 0 to 1", () => {
    expect(
      problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "2",
      }),
    ).toEqual(['OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, not "2"']);
  });

  it("refuses a batch larger than the queue", () => {
    expect(
      problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_BSP_MAX_QUEUE_SIZE: "10",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "20",
      }),
    ).toEqual(["OTEL_BSP_MAX_EXPORT_BATCH_SIZE (20) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (10)"]);
  });
});
