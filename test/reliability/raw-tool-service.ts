import { type AddressInfo, createServer, type Socket } from "node:net";

export interface RawRequest {
  path: string;
  body: Record<string, unknown>;
}

/** Answers one tool request by writing whatever bytes it likes to the socket, HTTP or not. */
export type RawRoute = (socket: Socket, request: RawRequest) => unknown;

export interface RawToolService {
  url: string;
  /** Every request read in full, in arrival order. */
  received: RawRequest[];
  close: () => Promise<void>;
}

/**
 * A tool service on a bare TCP socket, for responses no HTTP library would write: random bytes,
 * broken framing, oversized headers, a byte at a time. It reads one whole request per connection
 * (its body too, so Brain never sees a reset for a request it is still sending), then hands the
 * socket to `answer`. One answer per service, on a port of its own: after a broken answer a
 * connection's state is anyone's guess, and no other call must land on it.
 */
export async function startRawToolService(answer: RawRoute): Promise<RawToolService> {
  const received: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      socket.off("data", onData);
      const path = head.split(" ")[1] ?? "/";
      const request = { path, body: JSON.parse(buffered.subarray(end + 4, end + 4 + length).toString()) };
      received.push(request);
      Promise.resolve(answer(socket, request)).catch(() => socket.destroy());
    };
    socket.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${url}/tool`,
    received,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
