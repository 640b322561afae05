import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ModelRequestSeen {
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body; each fake declares the shape of its provider's requests. */
  body: unknown;
  at: number;
  /** Resolves when the client closed the connection before the response ended. */
  closed: Promise<void>;
}

export type Reply = (res: ServerResponse, request: ModelRequestSeen) => void | Promise<void>;

export interface FakeModelServer {
  url: string;
  requests: ModelRequestSeen[];
  /** Replies to the next requests, in order; a request with none queued gets a 500 that names the mistake. */
  enqueue: (...replies: Reply[]) => void;
  close: () => Promise<void>;
}

/**
 * A model provider's API on an ephemeral loopback port: it records each request and answers with
 * the next queued reply, which speaks that provider's wire format (see fake-anthropic.ts,
 * fake-openai.ts).
 */
export async function startFakeModelServer(): Promise<FakeModelServer> {
  const requests: ModelRequestSeen[] = [];
  const queue: Reply[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const request: ModelRequestSeen = {
      path: (req.url ?? "/").split("?")[0] as string,
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
      at: Date.now(),
      closed: new Promise((resolve) =>
        res.once("close", () => (res.writableFinished ? undefined : resolve())),
      ),
    };
    requests.push(request);
    const reply = queue.shift();
    if (!reply) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "test_error", message: "the test queued no reply" } }));
      return;
    }
    await reply(res, request);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// byte sizes of the pieces an SSE body is cut into: lines, JSON and UTF-8 characters all end up split
const PIECES = [1, 7, 3, 13, 2, 29, 5, 11];

/**
 * Write an SSE body in small pieces, each its own write after a turn of the event loop, so the
 * client reads lines, JSON and multi-byte characters split across network reads.
 */
export async function writeSse(
  res: ServerResponse,
  body: string,
  options: { headers?: Record<string, string>; dropAfterBytes?: number } = {},
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...options.headers,
  });
  const bytes = Buffer.from(body, "utf8");
  const end = options.dropAfterBytes ?? bytes.length;
  for (let offset = 0, i = 0; offset < end; i++) {
    const size = Math.min(PIECES[i % PIECES.length] as number, end - offset);
    if (!res.write(bytes.subarray(offset, offset + size))) await new Promise((r) => res.once("drain", r));
    offset += size;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // a dropped connection: the stream stops mid-way and the socket is cut
  if (options.dropAfterBytes !== undefined) res.socket?.destroy();
  else res.end();
}

/** Write `body`, then keep the response open until the client leaves. */
export async function writeSseAndHold(res: ServerResponse, body: string, request: ModelRequestSeen) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(body);
  await request.closed;
}

/** A stream that writes `head`, then `repeated` over and over, until the client leaves. */
export async function writeSseForever(
  res: ServerResponse,
  head: string,
  repeated: string,
  request: ModelRequestSeen,
) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(head);
  let open = true;
  void request.closed.then(() => {
    open = false;
  });
  while (open && !res.destroyed) {
    if (!res.write(repeated)) await new Promise((resolve) => res.once("drain", resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Write each of `frames` whole, as fast as the client reads, until they are all sent or the client
 * leaves: a reply of many MiB in no time, where writeSse's small pieces would take minutes.
 */
export async function writeSseFrames(
  res: ServerResponse,
  frames: Iterable<string>,
  request: ModelRequestSeen,
) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const frame of frames) {
    if (res.destroyed) return;
    // a client gone never drains: its leaving ends the wait, and the loop with it
    if (!res.write(frame))
      await Promise.race([new Promise((resolve) => res.once("drain", resolve)), request.closed]);
  }
  res.end();
}

export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Cut `text` into pieces at awkward places: inside keys, strings, escapes and numbers. */
export function awkwardPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let offset = 0, i = 0; offset < text.length; i++) {
    const size = [1, 4, 2, 6, 3][i % 5] as number;
    pieces.push(text.slice(offset, offset + size));
    offset += size;
  }
  return pieces;
}
