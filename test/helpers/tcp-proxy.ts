import { connect, createServer, type Socket } from "node:net";

export interface TcpProxy {
  /** host:port of the proxy's end. */
  port: number;
  /** Cut every connection and refuse new ones (they are closed as they come), as a server that went away. */
  cut: () => void;
  /** Let connections through again. */
  restore: () => void;
  /** Stop passing bytes on every open connection, closing none: a peer that died without a word. */
  freeze: () => void;
  close: () => Promise<void>;
}

/** A TCP proxy on loopback in front of `target`, whose connections a test can cut: the network between Brain and its database. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    cut: () => {
      refusing = true;
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    restore: () => {
      refusing = false;
    },
    freeze: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.pause();
      }
    },
    close: async () => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
