// A collector's receiving end for the overhead benchmark: OTLP/HTTP on loopback that reads each
// export whole and answers 200 with an empty ExportTraceServiceResponse, as a collector does, in
// a process of its own so that its work is not Brain's. Prints "otlp sink listening on URL".
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

let spans = 0;
const server = createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  // a rough count, for the log line at exit: each span carries one spanId
  spans += body.split('"spanId"').length - 1;
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`otlp sink listening on http://127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => {
  process.stdout.write(`otlp sink received ${spans} spans\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
