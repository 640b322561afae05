import { once } from "node:events";
import { createServer, get, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventStreamBody } from "./event-stream-body.js";
import { HeldFrames } from "./held-writes.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/**
 * An event stream's body on a real socket, whose writes to the socket are logged as they are made:
 * `write` for one buffer, `writev` for pieces gathered.
 */
async function openResponse(): Promise<{
  res: ServerResponse;
  stream: EventStreamBody;
  body: IncomingMessage;
  log: string[];
}> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => server.close());
  const responded = once(server, "request") as Promise<[IncomingMessage, ServerResponse]>;
  const request = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  closers.push(() => request.destroy());
  const [req, res] = await responded;
  const stream = new EventStreamBody(res, req);
  stream.open({ "content-type": "text/plain" });
  stream.write("open");
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
    log.push(`write ${payloadOf([chunk])}: ${chunksOf([chunk])} chunk`);
    write(chunk, encoding, done);
  };
  socket._writev = (chunks, done) => {
    const parts = chunks.map(({ chunk }) => chunk);
    log.push(`writev ${payloadOf(parts)}: ${chunksOf(parts)} chunk`);
    writev(chunks, done);
  };
  return { res, stream, body, log };
}

/** What a write carries, without the chunked encoding's sizes and line ends. */
const payloadOf = (chunks: (Buffer | string)[]) =>
  chunks
    .map(String)
    .join("")
    .split("\r\n")
    .filter((_, i) => i % 2 === 1)
    .join("");

/** How many chunks of the chunked encoding a write carries. */
const chunksOf = (chunks: (Buffer | string)[]) => (chunks.map(String).join("").split("\r\n").length - 1) / 2;

const nextChecks = (count: number) =>
  new Promise<void>((resolve) => {
    const step = (left: number) => (left === 0 ? resolve() : setImmediate(() => step(left - 1)));
    step(count);
  });

describe("HeldFrames", () => {
  it("writes the frames of a pass as one chunk, after what the promise callbacks of the moment queued for the next check phase", async () => {
    const { stream, log } = await openResponse();
    const frames = new HeldFrames(stream);
    frames.add("a");
    frames.add("b");
    expect(frames.length).toBe(2);
    // as a tool call's request is sent: from a promise callback, at the next check phase
    void Promise.resolve().then(() => setImmediate(() => log.push("request")));
    await nextChecks(3);
    expect(log).toEqual(["request", "write ab: 1 chunk"]);
    expect(frames.length).toBe(0);
  });

  it("holds each stream's frames apart, and the next pass's in a write of its own", async () => {
    const first = await openResponse();
    const second = await openResponse();
    const a = new HeldFrames(first.stream);
    const b = new HeldFrames(second.stream);
    a.add("a1");
    b.add("b1");
    a.add("a2");
    await nextChecks(3);
    a.add("a3");
    await nextChecks(3);
    expect(first.log).toEqual(["write a1a2: 1 chunk", "write a3: 1 chunk"]);
    expect(second.log).toEqual(["write b1: 1 chunk"]);
  });

  it("lets a stream end: its held frames go before the end, and the release finds nothing left", async () => {
    const { stream, body, log } = await openResponse();
    let rest = "";
    body.on("data", (chunk: string) => {
      rest += chunk;
    });
    const frames = new HeldFrames(stream);
    frames.add("a");
    frames.flush();
    stream.write("z");
    stream.end();
    await once(body, "end");
    expect(rest).toBe("az");
    await nextChecks(3);
    expect(log).toHaveLength(1);
  });

  it("counts what each write carries in UTF-8 bytes, the client's count, not in characters", async () => {
    const { stream, body } = await openResponse();
    let received = "";
    body.on("data", (chunk: string) => {
      received += chunk;
    });
    const written: number[] = [];
    const frames = new HeldFrames(stream, (bytes) => written.push(bytes));
    frames.add("déjà ");
    frames.add("vu ✓");
    await nextChecks(3);
    expect(written).toEqual([Buffer.byteLength("déjà vu ✓")]);
    expect("déjà vu ✓".length).toBeLessThan(written[0] as number);
    stream.end();
    await once(body, "end");
    expect(received).toBe("déjà vu ✓");
  });

  it("writes nothing to a response destroyed meanwhile, and counts nothing", async () => {
    const { res, stream, log } = await openResponse();
    const written: number[] = [];
    const frames = new HeldFrames(stream, (bytes) => written.push(bytes));
    frames.add("a");
    res.destroy();
    await nextChecks(3);
    expect(log).toEqual([]);
    expect(written).toEqual([]);
  });
});
