import { createServer, request } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface ForwardProxy {
  url: string;
  /** "CONNECT host:port" or "POST http://…" for each request the proxy carried or refused. */
  carried: string[];
  close: () => Promise<void>;
}

/**
 * A real HTTP forward proxy on loopback: CONNECT tunnels and absolute-form requests, as
 * corporate proxies and squid speak them. With `refuse`, it answers 403 to everything.
 */
export async function startForwardProxy(options: { refuse?: boolean } = {}): Promise<ForwardProxy> {
  const carried: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    carried.push(`${req.method} ${req.url}`);
    if (options.refuse) {
      res.writeHead(403).end();
      return;
    }
    const target = new URL(req.url ?? "");
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req, client: Socket, head) => {
    carried.push(`CONNECT ${req.url}`);
    if (options.refuse) {
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    carried,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
