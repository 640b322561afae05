import { Type } from "@sinclair/typebox";
import { CatalogSchema } from "../../protocol/catalog.js";
import { ErrorResponseSchema } from "../../protocol/errors.js";
import { EventListSchema } from "../../protocol/events.js";
import {
  ApprovalAnswerSchema,
  type ApprovalBody,
  ApprovalBodySchema,
  type CreateSessionBody,
  CreateSessionBodySchema,
  PostMessageAnswerSchema,
  type PostMessageBody,
  PostMessageBodySchema,
  SessionListSchema,
  SessionSchema,
} from "../../protocol/session.js";
import { compile, compileNow } from "../../protocol/validation.js";
import type { BrainConfig } from "../config/load.js";
import type { EventBus } from "../events/bus.js";
import type { SessionDirectory } from "../sessions/directory.js";
import { SessionError } from "../sessions/errors.js";
import type { SessionRecord } from "../sessions/session-record.js";
import type { Store } from "../store/store.js";
import type { Metrics } from "../telemetry/metrics.js";
import { parseTraceparent } from "../telemetry/trace-context.js";
import type { TurnSupervisor } from "../turns/supervisor.js";
import { acceptsEventStream } from "./accept.js";
import { consoleRoutes } from "./console.js";
import { ApiError, apiErrorOf, sessionNotFound } from "./errors.js";
import { streamEvents } from "./event-stream.js";
import { readJsonBody, sendError, sendJson } from "./http.js";
import { answerOnce, errorAnswer, sendAnswer } from "./idempotency.js";
import { buildOpenApi } from "./openapi.js";
import type { RequestTarget } from "./request-target.js";
import type { RequestContext, Route } from "./router.js";
import { TenantStreamLimits } from "./stream-limits.js";

export interface RouteDeps {
  config: BrainConfig;
  sessions: SessionDirectory;
  turns: TurnSupervisor;
  store: Store;
  bus: EventBus;
  metrics: Metrics;
  sseKeepAliveMs: number;
  sseHistoryStallMs: number;
}

const validateCreateSession = compile<CreateSessionBody>(CreateSessionBodySchema);
const validatePostMessage = compile<PostMessageBody>(PostMessageBodySchema);
const validateApproval = compile<ApprovalBody>(ApprovalBodySchema);

// a page of events as JSON is built in memory: its size is bounded, not only its count
const MAX_EVENT_PAGE_BYTES = 8 * 1024 * 1024;

const errorResponse = (description: string) => ({ description, schema: ErrorResponseSchema });
const IDEMPOTENCY_ERRORS = {
  409: errorResponse("A request with this Idempotency-Key is still running."),
  422: errorResponse("This Idempotency-Key was used with another request in the last 24 hours."),
};
const SESSION_ERRORS = {
  401: errorResponse("No or wrong API key."),
  404: errorResponse("No such session, or not yours."),
};

function sessionView(session: SessionRecord) {
  return { id: session.id, status: session.status, config: session.config, created_at: session.created_at };
}

function integerParam(
  url: RequestTarget,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number | ApiError {
  const raw = url.searchParams.get(name);
  return raw === null ? fallback : parseInteger(raw, name, min, max);
}

function parseInteger(raw: string, name: string, min: number, max: number): number | ApiError {
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    return new ApiError("invalid_request", `${name}: must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** Where an SSE stream starts: after Last-Event-ID when the client sent one, else after `after`. */
function resumePoint(req: RequestContext["req"], after: number): number | ApiError {
  const lastEventId = req.headers["last-event-id"];
  if (typeof lastEventId !== "string" || lastEventId === "") return after;
  return parseInteger(lastEventId.trim(), "Last-Event-ID", 0, Number.MAX_SAFE_INTEGER);
}

export function createRoutes(deps: RouteDeps): Route[] {
  const { config, sessions, turns, store, bus, metrics } = deps;
  const streamLimits = new TenantStreamLimits(config.tenants);
  compileNow(validateCreateSession, validatePostMessage, validateApproval);

  /** The session a caller may read: its tenant's, or the one its inspection token is for. */
  const readableSession = async (ctx: RequestContext): Promise<SessionRecord | undefined> => {
    const id = ctx.params.id as string;
    if (ctx.inspection && ctx.inspection.sessionId !== id) return undefined;
    return sessions.get(ctx.tenantId, id);
  };

  const routes: Route[] = [
    {
      method: "GET",
      path: "/healthz",
      auth: "public",
      operationId: "health",
      summary: "Liveness: 200 while Brain serves requests.",
      responses: { 200: { description: "Alive.", schema: Type.Object({ status: Type.Literal("ok") }) } },
      handle: ({ res }) => sendJson(res, 200, { status: "ok" }),
    },
    {
      method: "GET",
      path: "/metrics",
      auth: "public",
      operationId: "metrics",
      summary: "Prometheus metrics. They carry no ids, keys or tokens.",
      responses: {
        200: {
          description: "Metrics in the Prometheus text format (version 0.0.4).",
          contentTypes: ["text/plain"],
        },
      },
      handle: async ({ res }) => {
        const body = await metrics.registry.metrics();
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(body);
      },
    },
    {
      method: "GET",
      path: "/openapi.json",
      auth: "public",
      operationId: "openapi",
      summary: "This API's OpenAPI 3.1 description.",
      responses: {
        200: {
          description: "The OpenAPI document.",
          schema: { type: "object" },
          contentTypes: ["application/json"],
        },
      },
      handle: ({ res }) => sendJson(res, 200, openApi),
    },
    {
      method: "GET",
      path: "/catalog",
      auth: "tenant",
      operationId: "getCatalog",
      summary:
        "The tools offered to the caller's tenant: name, description and schemas, never where they run.",
      responses: {
        200: { description: "The catalog.", schema: CatalogSchema },
        401: errorResponse("No or wrong API key."),
      },
      handle: ({ res, tenantId }) => {
        const tools = [...config.tools.values()]
          .filter((tool) => tool.tenants.has(tenantId))
          .map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.inputSchema,
            ...(tool.outputSchema && { output_schema: tool.outputSchema }),
          }));
        sendJson(res, 200, { tools });
      },
    },
    {
      method: "POST",
      path: "/sessions",
      auth: "tenant",
      operationId: "createSession",
      idempotent: true,
      summary:
        "Create a session with a model, a system prompt and the tools it may use. With an Idempotency-Key header, a retry within 24 h gets the first answer again (Idempotent-Replayed: true) and creates nothing; the same key with another body is refused (422).",
      requestBody: { schema: CreateSessionBodySchema, required: false },
      responses: {
        201: { description: "Created.", schema: SessionSchema },
        400: errorResponse("Invalid body, or an unknown model or tool."),
        401: errorResponse("No or wrong API key."),
        ...IDEMPOTENCY_ERRORS,
        413: errorResponse("Body too large."),
      },
      handle: async (ctx) => {
        const body = await readJsonBody(ctx.req, config.limits.max_request_bytes, validateCreateSession, {});
        if (body instanceof ApiError) return sendError(ctx.res, body);
        const answer = await answerOnce(ctx, store, body, async () => {
          const session = await sessions.create(ctx.tenantId, body.config);
          if (session instanceof SessionError) return errorAnswer(apiErrorOf(session));
          return {
            status: 201,
            body: sessionView(session),
            headers: { location: `/sessions/${session.id}` },
          };
        });
        sendAnswer(ctx.res, answer);
      },
    },
    {
      method: "GET",
      path: "/sessions",
      auth: "tenant",
      operationId: "listSessions",
      summary: "The caller's sessions, newest first, paged with next_cursor.",
      query: {
        limit: {
          description:
            "Page size, 1 to 100 (default 20); fewer when their configs pass 8 MiB, so page on with next_cursor until it is null.",
          schema: { type: "integer", minimum: 1, maximum: 100 },
        },
        cursor: { description: "next_cursor of the previous page.", schema: { type: "string" } },
      },
      responses: {
        200: { description: "A page of sessions.", schema: SessionListSchema },
        400: errorResponse("A limit out of range, or a cursor that is not a next_cursor."),
        401: errorResponse("No or wrong API key."),
      },
      handle: async ({ res, url, tenantId }) => {
        const limit = integerParam(url, "limit", 20, 1, 100);
        if (limit instanceof ApiError) return sendError(res, limit);
        const cursor = url.searchParams.get("cursor") ?? undefined;
        // a cursor is the last session of a page this tenant was given: anything else pages nowhere
        if (cursor !== undefined && !(await sessions.get(tenantId, cursor))) {
          return sendError(
            res,
            new ApiError("invalid_request", "cursor: not a next_cursor from a listing of your sessions"),
          );
        }
        const page = await sessions.list(tenantId, limit, cursor);
        sendJson(res, 200, { sessions: page.sessions.map(sessionView), next_cursor: page.next_cursor });
      },
    },
    {
      method: "GET",
      path: "/sessions/{id}",
      auth: "session_reader",
      operationId: "getSession",
      summary: "Read a session.",
      responses: { 200: { description: "The session.", schema: SessionSchema }, ...SESSION_ERRORS },
      handle: async (ctx) => {
        const session = await readableSession(ctx);
        if (!session) return sendError(ctx.res, sessionNotFound(ctx.params.id as string));
        sendJson(ctx.res, 200, sessionView(session));
      },
    },
    {
      method: "POST",
      path: "/sessions/{id}/messages",
      auth: "tenant",
      operationId: "postMessage",
      idempotent: true,
      summary:
        'Send a user message; it starts a turn. While a turn runs, `on_busy` says what happens: "reject" (409, the default), "enqueue" (202 with its place in the session\'s queue; it starts its own turn when the turns before it end) or "interrupt" (the running turn is interrupted, then this one starts).',
      requestBody: { schema: PostMessageBodySchema, required: true },
      responses: {
        202: {
          description: "Stored; its turn runs (`seq`), or it waits in the queue (`queued`, its place).",
          schema: PostMessageAnswerSchema,
        },
        400: errorResponse("Invalid body."),
        ...SESSION_ERRORS,
        ...IDEMPOTENCY_ERRORS,
        409: errorResponse(
          "A turn is running (on_busy reject), the queue is full, the session is closed, or a request with this Idempotency-Key is still running.",
        ),
        413: errorResponse("Body too large."),
        429: errorResponse(
          "The tenant is over its requests_per_second, or runs its max_concurrent_turns turns already; try again after Retry-After.",
        ),
      },
      handle: async (ctx) => {
        const { req, params, tenantId } = ctx;
        const body = await readJsonBody(req, config.limits.max_request_bytes, validatePostMessage);
        if (body instanceof ApiError) return sendError(ctx.res, body);
        const answer = await answerOnce(ctx, store, body, async () => {
          const session = await sessions.get(tenantId, params.id as string);
          if (!session) return errorAnswer(sessionNotFound(params.id as string));
          const trace = parseTraceparent(req.headers.traceparent);
          const accepted = await turns.postMessage(session, body.content, trace, body.on_busy);
          if (!(accepted instanceof SessionError)) return { status: 202, body: accepted };
          const refused = errorAnswer(apiErrorOf(accepted));
          return accepted.code === "too_many_turns"
            ? { ...refused, headers: { "retry-after": "1" } }
            : refused;
        });
        sendAnswer(ctx.res, answer);
      },
    },
    {
      method: "POST",
      path: "/sessions/{id}/calls/{call_id}/approval",
      auth: "tenant",
      operationId: "answerApproval",
      summary:
        'Approve or deny a tool call that waits for approval (its binding has approval "always"). The answer is stored once and bound to the call: approved, the call is sent; denied, it ends `denied` without being sent.',
      requestBody: { schema: ApprovalBodySchema, required: true },
      responses: {
        200: { description: "Stored; the turn goes on.", schema: ApprovalAnswerSchema },
        400: errorResponse("Invalid body."),
        401: errorResponse("No or wrong API key."),
        404: errorResponse("No such session (or not yours), or no such call waiting in its turn."),
        409: errorResponse(
          "The call was answered already, its approval expired, its turn ended, or the session is closed.",
        ),
        413: errorResponse("Body too large."),
      },
      handle: async ({ req, res, params, tenantId }) => {
        const body = await readJsonBody(req, config.limits.max_request_bytes, validateApproval);
        if (body instanceof ApiError) return sendError(res, body);
        const session = await sessions.get(tenantId, params.id as string);
        if (!session) return sendError(res, sessionNotFound(params.id as string));
        const answered = await turns.answerApproval(session, params.call_id as string, body);
        if (answered instanceof SessionError) return sendError(res, apiErrorOf(answered));
        sendJson(res, 200, { call_id: answered.call_id, decision: answered.decision });
      },
    },
    {
      method: "GET",
      path: "/sessions/{id}/events",
      auth: "session_reader",
      operationId: "getEvents",
      summary:
        "Stored events after `after` as JSON; with Accept: text/event-stream, an SSE stream of the history after `after` (or Last-Event-ID) and then live events.",
      query: {
        after: {
          description: "Only events with a greater seq (default 0).",
          schema: { type: "integer", minimum: 0 },
        },
        limit: {
          description:
            "JSON only: at most this many events, 1 to 10000 (default 1000); fewer when they pass 8 MiB, so page on with after = the last seq until a page is empty.",
          schema: { type: "integer", minimum: 1, maximum: 10000 },
        },
      },
      responses: {
        200: {
          description: "Events.",
          schema: EventListSchema,
          contentTypes: ["application/json", "text/event-stream"],
        },
        400: errorResponse(
          "A bad after, limit or Last-Event-ID, or, for an event stream of a session not closed, one past its last event.",
        ),
        ...SESSION_ERRORS,
        429: errorResponse("The tenant holds its max_event_streams open already (too_many_streams)."),
      },
      handle: async (ctx) => {
        const { req, res, url } = ctx;
        const session = await readableSession(ctx);
        if (!session) return sendError(res, sessionNotFound(ctx.params.id as string));
        const after = integerParam(url, "after", 0, 0, Number.MAX_SAFE_INTEGER);
        if (after instanceof ApiError) return sendError(res, after);
        if (!acceptsEventStream(req.headers.accept)) {
          const limit = integerParam(url, "limit", 1000, 1, 10_000);
          if (limit instanceof ApiError) return sendError(res, limit);
          const events = await store.readEvents(session.id, after, limit, MAX_EVENT_PAGE_BYTES);
          return sendJson(res, 200, { events });
        }
        const resumeAt = resumePoint(req, after);
        if (resumeAt instanceof ApiError) return sendError(res, resumeAt);
        // a client past the end of a session that goes on would silently miss the events up to it
        if (resumeAt > 0 && session.status !== "closed") {
          const last = await store.lastSeq(session.id);
          if (resumeAt > last) {
            return sendError(
              res,
              new ApiError(
                "invalid_request",
                `resuming after ${resumeAt}: the session's last event is ${last}`,
              ),
            );
          }
        }
        // taken where nothing is awaited before the stream opens: two at once cannot both take the last place
        const giveBack = streamLimits.take(session.tenant_id);
        if (!giveBack) {
          metrics.tenantLimited.inc({ tenant: session.tenant_id, limit: "max_event_streams" });
          return sendError(
            res,
            new ApiError(
              "too_many_streams",
              "this tenant holds its max_event_streams open already; close one, or try again later",
            ),
            { "retry-after": "1" },
          );
        }
        await streamEvents({
          req,
          res,
          sessionId: session.id,
          afterSeq: resumeAt,
          store,
          bus,
          keepAliveMs: deps.sseKeepAliveMs,
          maxBufferedBytes: 8 * 1024 * 1024,
          historyStallMs: deps.sseHistoryStallMs,
          ...(ctx.inspection && { endSignal: ctx.inspection.revoked }),
          onOpen: () => metrics.sseClients.inc(),
          onClose: () => {
            giveBack();
            metrics.sseClients.dec();
          },
          onWritten: (bytes) => metrics.sseBytes.inc(bytes),
        });
      },
    },
    {
      method: "POST",
      path: "/sessions/{id}/interrupt",
      auth: "tenant",
      operationId: "interruptSession",
      summary: "Stop the running turn: cancels the model call and every in-flight tool request.",
      responses: {
        200: { description: "Interrupted; the session as it is now.", schema: SessionSchema },
        ...SESSION_ERRORS,
        409: errorResponse("No turn is running, or the session is closed."),
      },
      handle: async ({ res, params, tenantId }) => {
        const session = await sessions.get(tenantId, params.id as string);
        if (!session) return sendError(res, sessionNotFound(params.id as string));
        const refused = await turns.interrupt(session);
        if (refused) return sendError(res, apiErrorOf(refused));
        sendJson(res, 200, sessionView((await sessions.get(tenantId, session.id)) ?? session));
      },
    },
    {
      method: "DELETE",
      path: "/sessions/{id}",
      auth: "tenant",
      operationId: "closeSession",
      summary:
        "Close the session: interrupts a running turn, then records session.closed. Later writes get 409.",
      responses: {
        200: { description: "Closed.", schema: SessionSchema },
        ...SESSION_ERRORS,
        409: errorResponse("Already closed."),
      },
      handle: async ({ res, params, tenantId }) => {
        const session = await sessions.close(tenantId, params.id as string);
        if (session instanceof SessionError) return sendError(res, apiErrorOf(session));
        sendJson(res, 200, sessionView(session));
      },
    },
    ...consoleRoutes(),
  ];
  const openApi = buildOpenApi(routes);
  return routes;
}
