import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Logger } from "pino";
import { answerWhatNodeWould, clientLeft } from "../runtime/http-refusals.js";
import { percentDecoded } from "../runtime/percent-decoding.js";
import { AnsweredCalls } from "./answered-calls.js";
import { bearerAuth } from "./auth.js";
import { handleToolCall } from "./call.js";
import { refuseStopping, sendError, sendJson, sendUnauthorized } from "./http.js";
import { createServiceLogger } from "./logger.js";
import { manifestOf } from "./manifest.js";
import type { Tool } from "./tool.js";

/** Answers a request the kit does not route itself; returns false to let the kit answer 404. */
export type ExtraRoutes = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;

export interface ServeOptions {
  tools: readonly Tool[];
  /** The bearer token Brain sends (the binding's token_env). Use tokenFromEnv(name). */
  token: string;
  /** Default 127.0.0.1: loopback unless you mean otherwise. */
  host?: string;
  /** Default 0: a free port (read it from `url`). */
  port?: number;
  /** Tools answer at `{basePath}/{name}`; `GET {basePath}` lists them. Default "/tools". */
  basePath?: string;
  /** Keep-alive comment interval on event streams. Default 15 000. */
  keepAliveMs?: number;
  /** Request body cap. Default 1 MiB. */
  maxBodyBytes?: number;
  /** One progress payload's cap, as Brain's limits.max_progress_bytes. Default 65 536. */
  maxProgressBytes?: number;
  /** How long close() lets handlers finish after their signal fired. Default 5 000. */
  closeGraceMs?: number;
  /** Default: JSON lines on stdout, named by `name`. */
  logger?: Logger;
  name?: string;
  /** Routes of your own (an operator page, a status endpoint); they do their own auth. */
  extraRoutes?: ExtraRoutes;
}

export interface RunningService {
  /** `http://host:port`, without the base path. */
  url: string;
  server: Server;
  logger: Logger;
  /**
   * Serve these tools from now on, in place of the ones served so far (a service whose tools come
   * and go at run time: the MCP bridge). Calls already running finish on the tool they started with.
   */
  setTools(tools: readonly Tool[]): void;
  /**
   * Stop accepting, refuse new requests on open connections (`service_stopping`), fire every
   * handler's signal, let them finish (bounded), then drop connections.
   */
  close(): Promise<void>;
}

class ServiceStopping extends Error {
  constructor() {
    super("the tool service is stopping");
  }
}

/** Serve tools over HTTP on the protocol of docs/protocol.md. */
export async function serve(options: ServeOptions): Promise<RunningService> {
  const basePath = (options.basePath ?? "/tools").replace(/\/+$/, "");
  let tools = toolsByName(options.tools);
  let manifest = manifestOf(tools.values());
  const authorized = bearerAuth(options.token);
  const logger = options.logger ?? createServiceLogger(options.name ?? "tool-service");
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const callOptions = {
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    maxProgressBytes: options.maxProgressBytes ?? 65_536,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    logger,
    stopping: stopping.signal,
    answered: new AnsweredCalls(),
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // server.close() leaves kept-alive connections open, and a request on one would run only to
    // have its socket destroyed when close() ends
    if (stopping.signal.aborted) return refuseStopping(req, res);
    // answered here rather than by Node, whose answer is a bare status line
    if (req.headers.host === undefined && req.httpVersion === "1.1")
      return sendError(res, "invalid_request", "an HTTP/1.1 request needs a Host header");
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://service");
    } catch {
      return sendError(res, "invalid_request", "the request target is not a valid path");
    }
    if (url.pathname === "/healthz" && req.method === "GET") return sendJson(res, 200, { status: "ok" });
    const underBase = url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
    if (!underBase) {
      if (options.extraRoutes && (await options.extraRoutes(req, res, url))) return;
      return sendError(res, "not_found", `nothing at ${url.pathname}; tools are at ${basePath}/NAME`);
    }
    if (!authorized(req.headers.authorization)) return sendUnauthorized(res);
    if (url.pathname === basePath) {
      if (req.method !== "GET") return sendError(res, "method_not_allowed", "use GET", { allow: "GET" });
      return sendJson(res, 200, manifest);
    }
    // a broken percent-escape names no tool
    const name = percentDecoded(url.pathname.slice(basePath.length + 1));
    const tool = name === undefined ? undefined : tools.get(name);
    if (!tool) return sendError(res, "not_found", `no tool at ${url.pathname}`);
    if (req.method !== "POST") return sendError(res, "method_not_allowed", "use POST", { allow: "POST" });
    await handleToolCall(tool, req, res, callOptions);
  };

  const sockets = new Set<Socket>();
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const handled = route(req, res).catch((error: unknown) => {
      const left = clientLeft(req, error);
      if (left) {
        logger.debug({ method: req.method, reason: left }, "client left mid-request");
        res.destroy();
        return;
      }
      logger.error({ err: error }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: { code: "internal", message: "internal error" } });
      else res.destroy();
    });
    inFlight.add(handled);
    handled.finally(() => inFlight.delete(handled));
  });
  answerWhatNodeWould(server);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, tools: [...tools.keys()] }, "tool service listening");

  return {
    url,
    server,
    logger,
    setTools: (next) => {
      tools = toolsByName(next);
      manifest = manifestOf(tools.values());
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      stopping.abort(new ServiceStopping());
      const grace = new Promise<void>((resolve) =>
        setTimeout(resolve, options.closeGraceMs ?? 5_000).unref(),
      );
      await Promise.race([allSettled(inFlight), grace]);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** Every request's end, those that come while waiting included: a refusal is sent, not cut. */
async function allSettled(requests: Set<Promise<void>>): Promise<void> {
  while (requests.size > 0) await Promise.allSettled([...requests]);
}

function toolsByName(list: readonly Tool[]): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const tool of list) {
    if (tools.has(tool.name)) throw new Error(`two tools are named "${tool.name}"`);
    tools.set(tool.name, tool);
  }
  return tools;
}
