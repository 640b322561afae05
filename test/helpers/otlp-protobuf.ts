import type { IExportTraceServiceRequest } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types.js";
import protobuf from "protobufjs";

// The messages of opentelemetry-proto's trace service that a receiver reads, with their field
// numbers (opentelemetry/proto/{collector/trace,trace,common,resource}/v1/*.proto). Fields left
// out are skipped when decoding, as any protobuf reader skips fields it does not know.
const SCHEMA = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const requestType = protobuf.parse(SCHEMA).root.lookupType("otlp.ExportTraceServiceRequest");

/**
 * An ExportTraceServiceRequest in the protobuf encoding (`application/x-protobuf`), read into the
 * shape of its JSON encoding: ids as hex, 64-bit numbers as strings, every list present.
 */
export function decodeProtobufTraces(body: Buffer): IExportTraceServiceRequest {
  const message = requestType.decode(body);
  const plain = requestType.toObject(message, { longs: String, arrays: true });
  return hexIds(plain) as IExportTraceServiceRequest;
}

/** The JSON encoding writes trace and span ids as hex, not as the base64 of bytes. */
function hexIds(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  if (Array.isArray(value)) return value.map(hexIds);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, hexIds(item)]));
  return value;
}
