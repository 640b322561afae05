import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  isInitializedNotification,
  isInitializeRequest,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../../services/mcp-bridge/config.js";

export interface TinyMcpServer {
  url: string;
  /** The Authorization header of every request it received. */
  authorizations: string[];
  /** Add a tool and tell every client its tools changed. */
  addTool: (tool: Tool) => Promise<void>;
  /** Forget every session, as a restarted server would: their next request gets 404. */
  forgetSessions: () => void;
  /** While set, an initialize request gets this HTTP status instead of a session (a proxy's 502, say). */
  refuseSessions: (status: number | undefined) => void;
  /** While set, an initialize request is answered this much later. */
  delaySessions: (ms: number) => void;
  /**
   * Sessions started from now on answer each POST with JSON once its result is ready, as many
   * servers do, instead of with an event stream at once: a call out holds its POST unanswered.
   */
  answerWithJson: () => void;
  /** The id of every session it started, in order. */
  sessions: string[];
  /** How many GET event streams are open now: each live client session keeps one. */
  openStreams: () => number;
  /** How many of its requests are open now: unanswered POSTs and DELETEs, and GET event streams. */
  openRequests: () => number;
  /** The session id of every DELETE it received. */
  deletes: string[];
  /** While set, every request of this kind is left unanswered, as a server that hangs would. */
  hang: (what: Hang | undefined) => void;
  close: () => Promise<void>;
}

/** An initialize request, the client's initialized notification, or a DELETE ending a session. */
type Hang = "initialize" | "initialized" | "delete";

/**
 * A small real MCP server on the SDK's low-level Server class over Streamable HTTP (stateful
 * sessions), whose `fail` tool answers tools/call with a JSON-RPC error, whose `wait` tool answers
 * only when the server closes, and whose tool list can grow.
 */
export async function startTinyMcpServer(): Promise<TinyMcpServer> {
  const tools: Tool[] = [
    { name: "fail", description: "Always fails with a JSON-RPC error.", inputSchema: { type: "object" } },
    { name: "hello", description: "Says hello.", inputSchema: { type: "object" } },
    { name: "wait", description: "Answers when the server closes.", inputSchema: { type: "object" } },
  ];
  const servers = new Set<Server>();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const authorizations: string[] = [];
  const sessions: string[] = [];
  const deletes: string[] = [];
  let refusal: number | undefined;
  let delayMs = 0;
  let json = false;
  let streams = 0;
  let open = 0;
  let hanging: Hang | undefined;
  // the `wait` tool's calls are answered once the server closes
  let release!: () => void;
  const closing = new Promise<void>((resolve) => {
    release = resolve;
  });

  const newServer = () => {
    const server = new Server(
      { name: "tiny", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      if (request.params.name === "fail") throw new Error("database down");
      if (request.params.name === "wait") await closing;
      return { content: [{ type: "text", text: `hello from ${request.params.name}` }] };
    });
    servers.add(server);
    return server;
  };

  const readJson = async (req: IncomingMessage): Promise<unknown> => {
    let text = "";
    for await (const chunk of req) text += chunk;
    return text === "" ? undefined : JSON.parse(text);
  };

  const http = createServer(async (req, res) => {
    authorizations.push(String(req.headers.authorization));
    open++;
    res.once("close", () => open--);
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    if (req.method === "DELETE") deletes.push(String(sessionId));
    const kind: Hang | undefined =
      req.method === "DELETE"
        ? "delete"
        : isInitializeRequest(body)
          ? "initialize"
          : isInitializedNotification(body)
            ? "initialized"
            : undefined;
    if (hanging !== undefined && kind === hanging) return;
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === "string" || !isInitializeRequest(body)) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"unknown session"}');
        return;
      }
      if (refusal !== undefined) {
        res.writeHead(refusal, { "content-type": "text/plain" }).end("refused");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => {
          transports.set(id, created);
          sessions.push(id);
        },
      });
      await newServer().connect(created);
      transport = created;
    }
    if (req.method === "GET") {
      streams++;
      res.once("close", () => streams--);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    authorizations,
    addTool: async (tool) => {
      tools.push(tool);
      await Promise.all([...servers].map((server) => server.sendToolListChanged().catch(() => undefined)));
    },
    forgetSessions: () => transports.clear(),
    refuseSessions: (status) => {
      refusal = status;
    },
    delaySessions: (ms) => {
      delayMs = ms;
    },
    answerWithJson: () => {
      json = true;
    },
    sessions,
    openStreams: () => streams,
    openRequests: () => open,
    deletes,
    hang: (what) => {
      hanging = what;
    },
    close: async () => {
      await Promise.all([...servers].map((server) => server.close()));
      release();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The bridge's config for the tiny server at `url`, as its config file would resolve: a shared server unless `fields` say otherwise. */
export function tinyServerConfig(
  url: string,
  fields: Partial<Pick<ServerConfig, "isolation" | "idleMs">> = {},
): ServerConfig {
  return {
    kind: "http",
    name: "tiny",
    prefix: "tiny",
    url,
    headers: {},
    timeoutMs: 10_000,
    isolation: "shared",
    idleMs: 600_000,
    maxInstances: 32,
    ...fields,
  };
}
