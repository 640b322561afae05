// The peer: the echo tool as an MCP server on the official TypeScript SDK, Streamable HTTP on
// loopback, stateful sessions as the SDK's own examples set it up. Run as its own process, like
// the example echo service Brain calls. Prints "mcp echo listening on URL" when ready.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const transports = new Map<string, StreamableHTTPServerTransport>();

function echoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo text.", inputSchema: { text: z.string().max(4096) } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text === "" ? undefined : JSON.parse(text);
}

const http = createServer(async (req, res) => {
  try {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (!isInitializeRequest(body)) {
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":"no session"}');
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await echoServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});

http.listen(0, "127.0.0.1", () => {
  console.log(`mcp echo listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0));
