import type { Dispatcher } from "undici";
import type { ToolResult } from "../../protocol/result.js";
import { describeErrors } from "../../protocol/validation.js";
import type { ToolBinding } from "../config/load.js";
import { environmentAgent } from "../http-agent.js";
import { traceparentOf } from "../telemetry/trace-context.js";
import type { Span } from "../telemetry/tracing.js";
import { CallAbort } from "./call-abort.js";
import { ToolFailure } from "./outcome.js";
import { type BodyRead, readToolResponse } from "./read-result.js";
import { redactResult, redactSecrets } from "./redact.js";
import { RequestWrittenDispatcher } from "./request-written.js";

export interface ToolCallRequest {
  tenantId: string;
  sessionId: string;
  callId: string;
  name: string;
  arguments: unknown;
  /** The binding if the tool is enabled for this session; undefined makes the call `unknown_tool`. */
  binding: ToolBinding | undefined;
  /** Fires when the session is interrupted or closed. */
  signal: AbortSignal;
  onProgress: (data: unknown) => void;
  /** Only for bindings with inspect_session. */
  inspection?: { token: string; brainUrl: string };
}

/** What a turn calls tools through: the dispatcher, or a wrapper of it (telemetry/traced-tools.ts). */
export type ToolCaller = Pick<ToolDispatcher, "call">;

export interface DispatcherOptions {
  headersTimeoutMs: number;
  maxProgressBytes: number;
  env?: NodeJS.ProcessEnv;
}

// abort reasons, compared by identity to tell our own aborts apart
const TIMEOUT = Symbol("timeout");
const HEADERS_TIMEOUT = Symbol("headers_timeout");
const CANCELLED = Symbol("cancelled");

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_PRX_TLS",
]);

/**
 * Sends tool calls: one POST per call, never retried, never redirected, over keep-alive pools
 * (one per origin, inside undici's Agent), through the environment's proxy when one is set.
 */
export class ToolDispatcher {
  readonly #dispatcher: RequestWrittenDispatcher;

  constructor(private readonly options: DispatcherOptions) {
    this.#dispatcher = new RequestWrittenDispatcher(
      environmentAgent({ keepAliveTimeout: 10_000, connections: null, pipelining: 1 }, options.env),
    );
  }

  /**
   * `span` is the call's: its context goes to the service as `traceparent`, and the response's
   * status and the bytes of its body read are written on it when it records. It comes apart from
   * the request because a copy of the request made to carry it cost a traced call 30-40 µs
   * (BENCHMARKS.md, "A traced call's request copy").
   */
  async call(request: ToolCallRequest, span?: Span): Promise<ToolResult> {
    const { binding } = request;
    if (!binding) {
      return new ToolFailure(
        "unknown_tool",
        `no tool named "${request.name}" is enabled for this session`,
      ).toResult();
    }
    if (!binding.validateArguments(request.arguments)) {
      const problems = describeErrors(binding.validateArguments.errors, "arguments", 5);
      return new ToolFailure(
        "invalid_arguments",
        `the arguments do not match the tool's input_schema: ${problems.join("; ")}`,
      ).toResult();
    }
    if (request.signal.aborted) {
      return ToolFailure.unsent(
        "cancelled",
        "the session was interrupted or closed before the call was sent",
      ).toResult();
    }

    // Our own timers, not undici's headersTimeout/bodyTimeout: undici's tick at about one second,
    // and the limits here are exact and may be fractions of a second. The headers limit counts
    // from the moment the request is written on a connected socket.
    const call = new CallAbort();
    const callTimer = setTimeout(() => call.abort(TIMEOUT), binding.timeoutMs);
    // set once the request is written: until then the call was never sent
    let headersTimer: NodeJS.Timeout | undefined;
    this.#dispatcher.watch(call, () => {
      // a call abandoned while connecting has ended: undici only aborts the request now
      if (call.aborted) return;
      headersTimer = setTimeout(() => call.abort(HEADERS_TIMEOUT), this.options.headersTimeoutMs);
    });
    const secrets = sentSecrets(binding, request);
    call.follow(request.signal, CANCELLED);
    let result: ToolResult;
    // counted only for a span that records it
    let read: BodyRead | undefined;
    try {
      const response = await untilAborted(
        this.#dispatcher.request({
          origin: binding.url.origin,
          path: binding.url.pathname + binding.url.search,
          method: "POST",
          headers: requestHeaders(binding, request.callId, span && traceparentOf(span.spanContext())),
          body: requestBody(request),
          signal: call,
          headersTimeout: 0,
          bodyTimeout: 0,
        }),
        call,
      );
      clearTimeout(headersTimer);
      if (span?.isRecording()) {
        span.setAttribute("http.response.status_code", response.statusCode);
        read = { bytes: 0 };
      }
      const outcome = await readToolResponse(
        response,
        binding,
        { maxProgressBytes: this.options.maxProgressBytes, secrets },
        // progress goes to every client of the session: it is searched like the result
        (data) => request.onProgress(redactSecrets(data, secrets)),
        read,
      );
      result = outcome instanceof ToolFailure ? outcome.toResult() : outcome;
    } catch (error) {
      result = classifyError(
        error,
        { abortReason: call.reason, written: headersTimer !== undefined },
        binding,
      ).toResult();
    } finally {
      clearTimeout(callTimer);
      clearTimeout(headersTimer);
      call.unfollow(request.signal);
      // what was read of a body cut short too: a lost connection's count says how far it got
      if (read) span?.setAttribute("brain.tool.response_bytes", read.bytes);
    }
    return redactResult(result, secrets);
  }

  /**
   * For when every call has ended: drops the keep-alive sockets and any connection still being
   * made for a call that was abandoned while connecting, instead of waiting out its connect timeout.
   */
  async close(): Promise<void> {
    await this.#dispatcher.destroy();
  }
}

/**
 * The response, or the abort's reason as soon as the call is aborted: undici does not stop a
 * request that is still connecting (it aborts it once connected, up to its connect timeout later),
 * and a timed-out or cancelled call must end at its limit.
 */
function untilAborted(
  request: Promise<Dispatcher.ResponseData>,
  call: CallAbort,
): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(call.reason);
    call.once("abort", onAbort);
    request.then(
      (response) => {
        call.removeListener("abort", onAbort);
        // answered just as the call was aborted: nobody reads this body
        if (call.aborted) response.body.destroy();
        else resolve(response);
      },
      (error) => {
        call.removeListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function requestHeaders(
  binding: ToolBinding,
  callId: string,
  traceparent: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    // so that ordinary infrastructure in front of a service can deduplicate without reading the body
    "idempotency-key": callId,
  };
  if (binding.token) headers.authorization = `Bearer ${binding.token.reveal()}`;
  if (traceparent) headers.traceparent = traceparent;
  return headers;
}

/** The secrets a request carried, which a service echoing it could send back. */
function sentSecrets(binding: ToolBinding, request: ToolCallRequest): string[] {
  const secrets: string[] = [];
  if (binding.token) secrets.push(binding.token.reveal());
  if (request.inspection) secrets.push(request.inspection.token);
  return secrets;
}

function requestBody(request: ToolCallRequest): string {
  // identity comes from the authenticated session, never from the model's arguments
  const body: Record<string, unknown> = {
    tenant_id: request.tenantId,
    session_id: request.sessionId,
    call_id: request.callId,
    arguments: request.arguments,
  };
  if (request.inspection) {
    body.inspection_token = request.inspection.token;
    body.brain_url = request.inspection.brainUrl;
  }
  return JSON.stringify(body);
}

function cancelled(): ToolFailure {
  return new ToolFailure("cancelled", "the session was interrupted or closed while the call was out");
}

/**
 * Map a thrown error to its outcome (docs/protocol.md#outcomes): our own aborts first, then undici's and the socket's codes.
 * `written` says whether the request went out: a call timed out before it connected never ran.
 */
export function classifyError(
  error: unknown,
  { abortReason, written }: { abortReason: unknown; written: boolean },
  binding: ToolBinding,
): ToolFailure {
  if (abortReason === CANCELLED) {
    // interrupted while it was still connecting: nothing went out, so the tool did not run
    return written
      ? cancelled()
      : ToolFailure.unsent("cancelled", "the session was interrupted or closed before the call was sent");
  }
  if (abortReason === HEADERS_TIMEOUT) {
    return new ToolFailure("headers_timeout", "the tool service sent no response headers in time");
  }
  if (abortReason === TIMEOUT && !written) {
    return new ToolFailure(
      "unreachable",
      `no connection to the tool service within timeout_seconds (${binding.timeoutMs / 1000} s)`,
    );
  }
  if (abortReason === TIMEOUT) {
    return new ToolFailure(
      "timeout",
      `the call did not finish within timeout_seconds (${binding.timeoutMs / 1000} s)`,
    );
  }
  const codes = errorCodes(error);
  // once the request went out, whatever broke the connection broke it under a call that may have run
  const unreachable = !written && codes.find((code) => UNREACHABLE_CODES.has(code) || TLS_CODE.test(code));
  if (unreachable)
    return new ToolFailure("unreachable", `the tool service could not be reached (${unreachable})`);
  if (!written && error instanceof Error && /proxy/i.test(error.message)) {
    return new ToolFailure("unreachable", `the proxy refused to carry the request (${error.message})`);
  }
  return new ToolFailure(
    "connection_lost",
    `the connection was lost after the request was sent (${codes[0] ?? "closed"})`,
  );
}

const TLS_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/;

/** The `code` of an error and of its causes, outermost first. */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
