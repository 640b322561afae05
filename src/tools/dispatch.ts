import type { Dispatcher } from "undici";
import type { ToolResult } from "../../protocol/result.js";
import { describeErrors } from "../../protocol/validation.js";
import type { ToolBinding } from "../config/load.js";
import { environmentAgent } from "../http-agent.js";
import { traceparentOf } from "../telemetry/trace-context.js";
import type { Span } from "../telemetry/tracing.js";
import { CANCELLED } from "./classify-error.js";
import { ToolFailure } from "./outcome.js";
import { redactResult, redactSecrets } from "./redact.js";
import { requestBody } from "./request-body.js";
import { TimerLists } from "./timer-lists.js";
import { ToolExchange } from "./tool-exchange.js";

export interface ToolCallRequest {
  tenantId: string;
  sessionId: string;
  callId: string;
  name: string;
  arguments: unknown;
  /** The arguments as JSON.stringify writes them, where the caller has that text already. */
  argumentsJson?: string | undefined;
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

/**
 * Sends tool calls: one POST per call, never retried, never redirected, over keep-alive pools
 * (one per origin, inside undici's Agent), through the environment's proxy when one is set.
 */
export class ToolDispatcher {
  readonly #dispatcher: Dispatcher;
  readonly #timerLists = new TimerLists();

  constructor(private readonly options: DispatcherOptions) {
    this.#dispatcher = environmentAgent(
      { keepAliveTimeout: 10_000, connections: null, pipelining: 1 },
      options.env,
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

    // the exchange's timers: the call's time limit and the wait for the response's head
    this.#timerLists.keep(binding.timeoutMs);
    this.#timerLists.keep(this.options.headersTimeoutMs);
    const secrets = sentSecrets(binding, request);
    const exchange = new ToolExchange(
      binding,
      {
        headersTimeoutMs: this.options.headersTimeoutMs,
        maxProgressBytes: this.options.maxProgressBytes,
        secrets,
      },
      // progress goes to every client of the session: it is searched like the result
      (data) => request.onProgress(redactSecrets(data, secrets)),
    );
    exchange.abort.follow(request.signal, CANCELLED);
    try {
      this.#dispatcher.dispatch(
        {
          origin: binding.origin,
          path: binding.path,
          method: "POST",
          headers: requestHeaders(binding, request.callId, span && traceparentOf(span.spanContext())),
          body: requestBody(request),
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        exchange,
      );
    } catch (error) {
      // undici hands a request it refuses to the handler's onError; anything thrown ends the call alike
      exchange.onError(error as Error);
    }
    // settles exactly once, whatever happens to the request: it never rejects
    const outcome = await exchange.outcome;
    exchange.abort.unfollow(request.signal);
    if (exchange.statusCode !== undefined && span?.isRecording()) {
      span.setAttribute("http.response.status_code", exchange.statusCode);
      // what was read of a body cut short too: a lost connection's count says how far it got
      span.setAttribute("brain.tool.response_bytes", exchange.bytesRead);
    }
    return redactResult(outcome instanceof ToolFailure ? outcome.toResult() : outcome, secrets);
  }

  /**
   * For when every call has ended: drops the keep-alive sockets and any connection still being
   * made for a call that was abandoned while connecting, instead of waiting out its connect timeout.
   */
  async close(): Promise<void> {
    this.#timerLists.close();
    await this.#dispatcher.destroy();
  }
}

/**
 * The request's headers as undici takes them fastest: names and values in one flat list, walked as
 * it is, where an object's keys are listed and each read by name (BENCHMARKS.md).
 */
function requestHeaders(binding: ToolBinding, callId: string, traceparent: string | undefined): string[] {
  const headers = [
    "content-type",
    "application/json",
    "accept",
    "application/json, text/event-stream",
    // so that ordinary infrastructure in front of a service can deduplicate without reading the body
    "idempotency-key",
    callId,
  ];
  if (binding.token) headers.push("authorization", `Bearer ${binding.token.reveal()}`);
  if (traceparent) headers.push("traceparent", traceparent);
  return headers;
}

/** The secrets a request carried, which a service echoing it could send back. */
function sentSecrets(binding: ToolBinding, request: ToolCallRequest): string[] {
  const secrets: string[] = [];
  if (binding.token) secrets.push(binding.token.reveal());
  if (request.inspection) secrets.push(request.inspection.token);
  return secrets;
}
