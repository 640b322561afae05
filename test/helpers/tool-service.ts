import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ReceivedCall {
  path: string;
  /** The request target as it came: the path and the query. */
  target: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Brain's end of the connection the call came on: the same for calls on one kept-alive connection. */
  remotePort: number | undefined;
  /** Resolves when Brain closes the connection before the response ended. */
  closed: Promise<void>;
}

export type ToolRoute = (
  call: ReceivedCall,
  res: ServerResponse,
  req: IncomingMessage,
) => void | Promise<void>;

/** A tool as the host config declares it. */
export interface ToolBindingConfig {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  url: string;
  tenants: string[];
  [field: string]: unknown;
}

export interface ToolService {
  url: string;
  /** The binding URL of a route. */
  at: (path: string) => string;
  /** A host-config tool named `name`, bound to the route `/name`, for tenant acme; `extra` adds to it. */
  binding: (name: string, extra?: Record<string, unknown>) => ToolBindingConfig;
  calls: ReceivedCall[];
  close: () => Promise<void>;
}

/** A real HTTP tool service on an ephemeral loopback port; each route answers as the test says. */
export async function startToolService(routes: Record<string, ToolRoute>): Promise<ToolService> {
  const calls: ReceivedCall[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const target = req.url ?? "/";
    const path = target.split("?")[0] as string;
    const call: ReceivedCall = {
      path,
      target,
      headers: req.headers,
      body: text ? JSON.parse(text) : {},
      remotePort: req.socket.remotePort,
      closed: new Promise((resolve) =>
        res.once("close", () => (res.writableFinished ? undefined : resolve())),
      ),
    };
    calls.push(call);
    const route = routes[path];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    await route(call, res, req);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    at: (path) => `${url}${path}`,
    binding: (name, extra) => ({
      name,
      description: name,
      input_schema: { type: "object" },
      url: `${url}/${name}`,
      tenants: ["acme"],
      ...extra,
    }),
    calls,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendJson(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

export const textResult = (text: string) => ({ content: [{ type: "text", text }] });
