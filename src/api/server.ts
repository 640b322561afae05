import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { answerWhatNodeWould, clientLeft } from "../../runtime/http-refusals.js";
import { StoreUnavailableError } from "../store/store.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import { type Authenticator, bearerToken } from "./auth.js";
import { ApiError } from "./errors.js";
import { sendError } from "./http.js";
import type { InspectionGrants } from "./inspection.js";
import type { TenantRateLimits } from "./rate-limits.js";
import { clientTrace, observeRequest } from "./request-observer.js";
import { requestTarget } from "./request-target.js";
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
        const left = clientLeft(req, error);
        if (left) {
          deps.logger.debug(
            { method: req.method, route, reason: left, ...clientTrace(req) },
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
  answerWhatNodeWould(server);
  server.keepAliveTimeout = 10_000;
  return server;
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, deps: ServerDeps): Promise<void> {
  const observed = observeRequest(req, res, deps);
  if (req.headers.host === undefined && req.httpVersion === "1.1")
    return sendError(res, new ApiError("invalid_request", "an HTTP/1.1 request needs a Host header"));
  const url = requestTarget(req.url ?? "/");
  if (!url) return sendError(res, new ApiError("invalid_request", "the request target is not a valid path"));
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
