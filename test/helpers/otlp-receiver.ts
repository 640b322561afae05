import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { IKeyValue } from "@opentelemetry/otlp-transformer/build/src/common/internal-types.js";
import type { IExportTraceServiceResponse } from "@opentelemetry/otlp-transformer/build/src/trace/export-response.js";
import type {
  IExportTraceServiceRequest,
  ISpan,
} from "@opentelemetry/otlp-transformer/build/src/trace/internal-types.js";
import { decodeProtobufTraces } from "./otlp-protobuf.js";

/** A span as received, its attributes folded into a record. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Every export request: its headers and raw body. */
  requests: { headers: IncomingHttpHeaders; body: string }[];
  /** Answer every export with this status from now on (200 by default). */
  answer: (status: number) => void;
  /** Wait until the spans received satisfy `predicate`; fails after `timeoutMs`. */
  waitFor: (predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number) => Promise<ReceivedSpan[]>;
  close: () => Promise<void>;
}

/**
 * An OTLP/HTTP trace receiver on an ephemeral loopback port, as a collector is: it takes
 * `POST /v1/traces` in either encoding, protobuf or JSON, and reads it as the OpenTelemetry
 * packages' own ExportTraceServiceRequest type, answering with their ExportTraceServiceResponse
 * in the request's encoding.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver["requests"] = [];
  let status = 200;
  const waiters = new Set<() => void>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    // protobuf's strings are UTF-8 as they are: a secret in an export shows in either encoding
    const body = raw.toString("utf8");
    requests.push({ headers: req.headers, body });
    const contentType = req.headers["content-type"];
    if (
      req.method !== "POST" ||
      req.url !== "/v1/traces" ||
      (contentType !== "application/json" && contentType !== "application/x-protobuf")
    ) {
      res.writeHead(404).end();
      return;
    }
    if (status !== 200) {
      res
        .writeHead(status, { "content-type": "application/json" })
        .end('{"code":13,"message":"unavailable"}');
      return;
    }
    const request: IExportTraceServiceRequest =
      contentType === "application/json" ? JSON.parse(body) : decodeProtobufTraces(raw);
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes ?? []);
      for (const scope of resourceSpans.scopeSpans)
        for (const span of scope.spans ?? []) spans.push(received(span, resource));
    }
    const answer: IExportTraceServiceResponse = {};
    // an empty ExportTraceServiceResponse is zero bytes in protobuf
    res
      .writeHead(200, { "content-type": contentType })
      .end(contentType === "application/json" ? JSON.stringify(answer) : "");
    for (const wake of waiters) wake();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    requests,
    answer: (next) => {
      status = next;
    },
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          cleanup();
          resolve(spans);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`spans received: ${spans.map((span) => span.name).join(", ") || "none"}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function received(span: ISpan, resource: Record<string, unknown>): ReceivedSpan {
  return {
    traceId: String(span.traceId),
    spanId: String(span.spanId),
    parentSpanId: span.parentSpanId ? String(span.parentSpanId) : undefined,
    name: span.name,
    kind: span.kind,
    attributes: attributesOf(span.attributes),
    // protobuf leaves out a status that is all defaults (unset, no message)
    status: { code: span.status?.code ?? 0, ...(span.status?.message && { message: span.status.message }) },
    events: span.events.map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
    resource,
  };
}

function attributesOf(list: IKeyValue[]): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, anyValue(value)]));
}

function anyValue(value: IKeyValue["value"]): unknown {
  if (value.stringValue != null) return value.stringValue;
  if (value.boolValue != null) return value.boolValue;
  if (value.intValue != null) return Number(value.intValue);
  if (value.doubleValue != null) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(anyValue);
  return undefined;
}
