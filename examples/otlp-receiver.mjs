// A tiny OTLP/HTTP trace receiver that prints each span it gets, one line each: enough to see a
// turn's trace without running a collector. It reads the JSON encoding of OTLP/HTTP: run Brain with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json (Brain's default is protobuf, which a collector reads).
// PORT (default 4318, OTLP/HTTP's usual port) sets where it listens.
import { createServer } from "node:http";

const port = Number(process.env.PORT ?? 4318);

/** An OTLP AnyValue as plain JSON. */
const plain = (value) =>
  value.stringValue ??
  value.boolValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.arrayValue?.values?.map(plain);

const server = createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  if (req.method !== "POST" || req.url !== "/v1/traces") {
    res.writeHead(404).end();
    return;
  }
  if (req.headers["content-type"] !== "application/json") {
    res
      .writeHead(415, { "content-type": "application/json" })
      .end('{"message":"send the JSON encoding: OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}');
    return;
  }
  let request;
  try {
    request = JSON.parse(body);
  } catch {
    res.writeHead(400, { "content-type": "application/json" }).end('{"message":"send the JSON encoding"}');
    return;
  }
  for (const { scopeSpans = [] } of request.resourceSpans ?? []) {
    for (const { spans = [] } of scopeSpans) {
      for (const span of spans) {
        const ms = (Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toFixed(3);
        const attributes = Object.fromEntries(
          (span.attributes ?? []).map(({ key, value }) => [key, plain(value)]),
        );
        const status = span.status?.code === 2 ? " ERROR" : "";
        process.stdout.write(
          `trace ${span.traceId} span ${span.spanId} parent ${span.parentSpanId || "-"} ${span.name} ${ms} ms${status} ${JSON.stringify(attributes)}\n`,
        );
      }
    }
  }
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`otlp receiver listening on http://127.0.0.1:${port}\n`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
