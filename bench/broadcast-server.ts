// The raw limit of fan-out: a bare node:http server that writes one serialized SSE frame to every
// connected client when asked. Run as its own process, like Brain. Prints "broadcast listening on URL".
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const clients = new Set<ServerResponse>();
let seq = 0;

const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    res.flushHeaders();
    clients.add(res);
    res.on("close", () => clients.delete(res));
    return;
  }
  req.resume();
  req.on("end", () => {
    seq += 1;
    // the size and shape of the message.user frame Brain sends
    const event = { seq, type: "tick", at: new Date().toISOString(), data: { content: "go" } };
    const frame = `id: ${seq}\nevent: tick\ndata: ${JSON.stringify(event)}\n\n`;
    for (const client of clients) client.write(frame);
    res.writeHead(204).end();
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`broadcast listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0));
