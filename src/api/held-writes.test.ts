import { once } from "node:events";
import { createServer, get, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { holdWrites } from "./held-writes.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A streaming response on a real socket, whose writes to the socket are logged as they are made. */
async function openResponse(): Promise<{ res: ServerResponse; body: IncomingMessage; log: string[] }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => server.close());
  const responded = once(server, "request") as Promise<[IncomingMessage, ServerResponse]>;
  const request = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  closers.push(() => request.destroy());
  const [, res] = await responded;
  res.writeHead(200, { "content-type": "text/plain" });
  res.write("open");
  const [body] = (await once(request, "response")) as [IncomingMessage];
  body.setEncoding("utf8");
  await once(body, "data");
  const log: string[] = [];
  const socket = res.socket as unknown as {
    _write: (chunk: Buffer, encoding: string, done: () => void) => void;
    _writev: (chunks: { chunk: Buffer | string }[], done: () => void) => void;
  };
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (chunk, encoding, done) => {
    log.push(`write ${payloadOf([chunk])}`);
    write(chunk, encoding, done);
  };
  socket._writev = (chunks, done) => {
    log.push(`write ${payloadOf(chunks.map(({ chunk }) => chunk))}`);
    writev(chunks, done);
  };
  return { res, body, log };
}

/** What a write carries, without the chunked encoding's sizes and line ends. */
const payloadOf = (chunks: (Buffer | string)[]) =>
  chunks
    .map(String)
    .join("")
    .split("\r\n")
    .filter((_, i) => i % 2 === 1)
    .join("");

const nextChecks = (count: number) =>
  new Promise<void>((resolve) => {
    const step = (left: number) => (left === 0 ? resolve() : setImmediate(() => step(left - 1)));
    step(count);
  });

describe("holdWrites", () => {
  it("writes what was held in one write, after what the promise callbacks of the moment queued for the next check phase", async () => {
    const { res, log } = await openResponse();
    holdWrites(res);
    res.write("a");
    holdWrites(res);
    res.write("b");
    // as a tool call's request is sent: from a promise callback, at the next check phase
    void Promise.resolve().then(() => setImmediate(() => log.push("request")));
    await nextChecks(3);
    expect(log).toEqual(["request", "write ab"]);
  });

  it("leaves a response someone else corked to them", async () => {
    const { res, log } = await openResponse();
    res.cork();
    holdWrites(res);
    res.write("a");
    res.uncork();
    log.push("uncorked");
    await nextChecks(3);
    expect(log).toEqual(["write a", "uncorked"]);
  });

  it("lets a held response end: its last writes go with the end, and the release finds nothing left", async () => {
    const { res, body, log } = await openResponse();
    let rest = "";
    body.on("data", (chunk: string) => {
      rest += chunk;
    });
    holdWrites(res);
    res.write("a");
    res.end("z");
    await once(body, "end");
    expect(rest).toBe("az");
    await nextChecks(3);
    expect(log).toHaveLength(1);
  });
});
