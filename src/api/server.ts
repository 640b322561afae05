import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { StoreUnavailableError } from "../store/store.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import { type Authenticator, bearerToken } from "./auth.js";
import { answerClientError, rawErrorResponse } from "./client-error.js";
import { ApiError } from "./errors.js";
import { sendError } from "./http.js";
import type { InspectionGrants } from "./inspection.js";
import type { TenantRateLimits } from "./rate-limits.js";
import { clientTrace, observeRequest } from "./request-observer.js";
import type { RequestContext, Router } from "./router.js";

export interface ServerDeps {
  router: Router;
  auth: Authenticator;
  inspection: InspectionGrants;
  logger: Logger;
  metrics: Metrics;
  rateLimits: TenantRateLimits;
  /** How long a client may take to send a whole request; a body that trickles is answered 408. */
  requestTimeoutMs: number;
}

/** What reading a request throws when its client hung up, or Node timed it out, mid-body. */
const CLIENT_LEFT = new Set(["ECONNRESET", "ERR_STREAM_PREMATURE_CLOSE"]);

const UNAUTHORIZED = new ApiError("unauthorized", "send Authorization: Bearer followed by your API key");

/** The HTTP server: match the route, authenticate, run the handler; every failure is a JSON error. */
export function createApiServer(deps: ServerDeps): Server {
  const server = createServer(
    {
      requestTimeout: deps.requestTimeoutMs,
      headersTimeout: Math.min(20_000, deps.requestTimeoutMs),
      // how often Node looks for requests past their time: the limit holds to within this
      connectionsCheckingInterval: Math.min(1000, deps.requestTimeoutMs / 2),
      // refused by handleRequest instead, with a JSON error like every other refusal
      requireHostHeader: false,
    },
    (req, res) => {
      handleRequest(req, res, deps).catch((error) => {
        const route = req.url?.split("?")[0];
        // a client that hung up (or was timed out) mid-request is no failure of Brain's, and
        // logging it as one would let any client flood the error log
        if (req.destroyed && CLIENT_LEFT.has(errorCode(error))) {
          deps.logger.debug(
            { method: req.method, route, reason: errorCode(error), ...clientTrace(req) },
            "client left mid-request",
          );
          res.destroy();
          return;
        }
        if (error instanceof StoreUnavailableError) {
          deps.logger.warn(
            { method: req.method, route, ...clientTrace(req) },
            "request failed: the store cannot be reached",
          );
          sendError(res, new ApiError("store_unavailable", error.message), { "retry-after": "1" });
          return;
        }
        deps.logger.error({ err: error, method: req.method, route, ...clientTrace(req) }, "request failed");
        sendError(res, new ApiError("internal", "Brain failed to handle this request; it is logged"));
      });
    },
  );
  server.on("clientError", answerClientError);
  // what Node would otherwise answer with a bare status line, or by closing the connection
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) =>
    sendError(res, new ApiError("invalid_request", "Expect: only 100-continue is understood")),
  );
  server.on("connect", (_req: IncomingMessage, socket: Duplex) =>
    socket.end(rawErrorResponse(new ApiError("method_not_allowed", "CONNECT is not served here"))),
  );
  server.keepAliveTimeout = 10_000;
  return server;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : String(error);
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, deps: ServerDeps): Promise<void> {
  const observed = observeRequest(req, res, deps);
  if (req.headers.host === undefined && req.httpVersion === "1.1")
    return sendError(res, new ApiError("invalid_request", "an HTTP/1.1 request needs a Host header"));
  let url: URL;
  try {
    url = new URL(req.url ?? "/", "http://brain.invalid");
  } catch {
    return sendError(res, new ApiError("invalid_request", "the request target is not a valid path"));
  }
  const match = deps.router.match(req.method ?? "GET", url.pathname);
  if (match.kind === "not_found")
    return sendError(res, new ApiError("not_found", `no route for ${url.pathname}`));
  if (match.kind === "method_not_allowed") {
    return sendError(res, new ApiError("method_not_allowed", `use ${match.allow.join(" or ")}`), {
      allow: match.allow.join(", "),
    });
  }
  const { route, params } = match;
  observed.route(route.path);
  const ctx: RequestContext = { req, res, url, params, tenantId: "", inspection: undefined };
  if (route.auth !== "public") {
    const token = bearerToken(req.headers.authorization);
    const tenantId = deps.auth.tenantFor(token);
    if (tenantId !== undefined) {
      const wait = deps.rateLimits.admit(tenantId, Date.now());
      if (wait > 0) {
        deps.metrics.tenantLimited.inc({ tenant: tenantId, limit: "requests_per_second" });
        return sendError(
          res,
          new ApiError("rate_limited", `over this tenant's requests_per_second; try again in ${wait} s`),
          { "retry-after": String(wait) },
        );
      }
      ctx.tenantId = tenantId;
    } else {
      const inspection =
        route.auth === "session_reader" && token ? await deps.inspection.principalFor(token) : undefined;
      if (!inspection) return sendError(res, UNAUTHORIZED, { "www-authenticate": "Bearer" });
      ctx.tenantId = inspection.tenantId;
      ctx.inspection = inspection;
    }
  }
  await route.handle(ctx);
}
