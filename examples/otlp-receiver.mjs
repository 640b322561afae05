// A tiny OTLP/HTTP trace receiver that prints each span it gets, one line each: enough to see a
// turn's trace without running a collector. It reads the JSON encoding of OTLP/HTTP: run Brain with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json (Brain's default is protobuf, which a collector reads).
// PORT (default 4318, OTLP/HTTP's usual port; 0 for any free one) sets where it listens.
import { createServer } from "node:http";

const port = Number(process.env.PORT ?? 4318);
/** Larger than any batch Brain sends (512 spans): a body past it is refused, not buffered. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** An OTLP AnyValue as plain JSON. */
const plain = (value) =>
  value.stringValue ??
  value.boolValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.arrayValue?.values?.map(plain);

/** One span as a line: trace, span, parent, name, duration, status and attributes. */
function spanLine(span) {
  const ms = (Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toFixed(3);
  const attributes = Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, plain(value)]));
  const status = span.status?.code === 2 ? " ERROR" : "";
  return `trace ${span.traceId} span ${span.spanId} parent ${span.parentSpanId || "-"} ${span.name} ${ms} ms${status} ${JSON.stringify(attributes)}\n`;
}

const server = createServer(async (req, res) => {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413, { "content-type": "application/json" }).end('{"message":"the body is too large"}');
      req.destroy();
      return;
    }
    chunks.push(chunk);
  }
  // joined as bytes, then decoded: a character split across two chunks stays whole
  const body = Buffer.concat(chunks).toString("utf8");
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
  let lines;
  try {
    const request = JSON.parse(body);
    lines = (request.resourceSpans ?? []).flatMap(({ scopeSpans = [] }) =>
      scopeSpans.flatMap(({ spans = [] }) => spans.map(spanLine)),
    );
  } catch {
    res
      .writeHead(400, { "content-type": "application/json" })
      .end('{"message":"send the JSON encoding of an OTLP ExportTraceServiceRequest"}');
    return;
  }
  process.stdout.write(lines.join(""));
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`otlp receiver listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
