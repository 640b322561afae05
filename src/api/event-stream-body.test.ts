import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventStreamBody } from "./event-stream-body.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server whose every response is an event stream body of `texts`, then its end. */
async function serveTexts(texts: readonly string[]): Promise<Server> {
  const server = createServer((req, res) => {
    const body = new EventStreamBody(res, req);
    body.open({ "content-type": "text/event-stream" });
    for (const text of texts) body.write(text);
    body.end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => server.close());
  return server;
}

/** A raw connection to `server`, and everything it has received so far. */
async function rawConnection(server: Server): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  closers.push(() => socket.destroy());
  await once(socket, "connect");
  let received = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  return { socket, received: () => received };
}

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe("EventStreamBody", () => {
  it("frames each write as one chunk of its UTF-8 bytes, ends with the last chunk, and leaves the connection open for the next request", async () => {
    const long = "x".repeat(300);
    const server = await serveTexts(["retry: 1000\n\n", "", "data: déjà vu\n\n", long, "ok"]);
    const { socket, received } = await rawConnection(server);
    socket.write("GET /a HTTP/1.1\r\nhost: brain\r\n\r\n");
    await until(() => received().endsWith("0\r\n\r\n"));
    const head = received().slice(0, received().indexOf("\r\n\r\n"));
    expect(head.toLowerCase().match(/transfer-encoding: chunked/g)).toHaveLength(1);
    expect(head.toLowerCase()).not.toContain("content-length");
    // "déjà vu" is 9 bytes in UTF-8 (sent as latin1 here, byte for byte): the chunk is 0x11 long
    expect(received().slice(head.length + 4)).toBe(
      `d\r\nretry: 1000\n\n\r\n11\r\ndata: d\u00c3\u00a9j\u00c3\u00a0 vu\n\n\r\n12c\r\n${long}\r\n2\r\nok\r\n0\r\n\r\n`,
    );
    // the body ended where its last chunk says: the same connection takes another request
    const before = received().length;
    socket.write("GET /b HTTP/1.1\r\nhost: brain\r\n\r\n");
    await until(() => received().length > before && received().endsWith("0\r\n\r\n"));
    expect(received().slice(before)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it("sends an HTTP/1.0 client the body unframed, ended by the connection's close", async () => {
    const server = await serveTexts(["retry: 1000\n\n", "data: x\n\n"]);
    const { socket, received } = await rawConnection(server);
    const closed = once(socket, "close");
    socket.write("GET /a HTTP/1.0\r\n\r\n");
    await closed;
    const [head, body] = received().split("\r\n\r\n", 2) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).not.toContain("transfer-encoding");
    expect(body).toBe("retry: 1000\n\ndata: x\n\n");
  });
});
