// A collector's receiving end for the overhead benchmark: OTLP/HTTP on loopback that reads each
// export whole and answers 200 with an empty ExportTraceServiceResponse, as a collector does, in
// a process of its own so that its work is not Brain's; with STATUS=500, a collector that fails
// every export (an empty google.rpc.Status). Prints "otlp sink listening on URL".
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const status = Number(process.env.STATUS ?? 200);
let exports = 0;
let bytes = 0;
const server = createServer(async (req, res) => {
  for await (const chunk of req) bytes += (chunk as Buffer).length;
  exports++;
  // an empty response in the request's encoding: zero bytes of protobuf, or {} of JSON
  const json = req.headers["content-type"] === "application/json";
  res
    .writeHead(status, { "content-type": json ? "application/json" : "application/x-protobuf" })
    .end(json ? "{}" : "");
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`otlp sink listening on http://127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => {
  process.stdout.write(`otlp sink received ${exports} exports, ${bytes} bytes\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
