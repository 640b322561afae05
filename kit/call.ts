import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { ResultObject } from "../protocol/result.js";
import { describeErrors } from "../protocol/validation.js";
import type { AnsweredCalls, Claim } from "./answered-calls.js";
import { EventStreamResponse } from "./event-stream.js";
import { readJsonBody, refuseStopping, sendError, sendJson } from "./http.js";
import { createInspector } from "./inspection.js";
import { errorResult, OutcomeUnknown, returnedToResult, thrownToResult } from "./result.js";
import type { Tool, ToolContext } from "./tool.js";

export interface CallOptions {
  maxBodyBytes: number;
  maxProgressBytes: number;
  keepAliveMs: number;
  logger: Logger;
  /** Fires when the service stops: every handler's signal fires with it. */
  stopping: AbortSignal;
  /** The results of the service's idempotent tools, by key. */
  answered: AnsweredCalls;
}

/** The request body of docs/protocol.md. Unknown fields are tolerated, so a newer Brain can add some. */
interface CallEnvelope {
  tenant_id: string;
  session_id: string;
  call_id: string;
  arguments: Record<string, unknown>;
  inspection?: { token: string; brainUrl: string };
}

/** The call's envelope, or what is wrong with it. Pure. */
export function parseEnvelope(body: unknown): CallEnvelope | { problem: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { problem: "the body must be a JSON object" };
  }
  const fields = body as Record<string, unknown>;
  for (const name of ["tenant_id", "session_id", "call_id"]) {
    const value = fields[name];
    if (typeof value !== "string" || value === "") return { problem: `${name}: must be a non-empty string` };
  }
  const args = fields.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { problem: "arguments: must be a JSON object" };
  }
  const { inspection_token: token, brain_url: brainUrl } = fields;
  if ((token === undefined) !== (brainUrl === undefined)) {
    return { problem: "inspection_token and brain_url come together or not at all" };
  }
  if (token !== undefined && (typeof token !== "string" || typeof brainUrl !== "string")) {
    return { problem: "inspection_token and brain_url: must be strings" };
  }
  const envelope: CallEnvelope = {
    tenant_id: fields.tenant_id as string,
    session_id: fields.session_id as string,
    call_id: fields.call_id as string,
    arguments: args as Record<string, unknown>,
  };
  if (typeof token === "string" && typeof brainUrl === "string") envelope.inspection = { token, brainUrl };
  return envelope;
}

class CallerGone extends Error {
  constructor() {
    super("the caller closed the connection");
  }
}

/** Answer one authenticated POST to a tool: check the body, run the handler, send its result. */
export async function handleToolCall(
  tool: Tool,
  req: IncomingMessage,
  res: ServerResponse,
  options: CallOptions,
): Promise<void> {
  // listened for before the first wait: a caller who hangs up while an earlier call with its key
  // runs would otherwise have its handler run with a signal that never fires
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort(new CallerGone());
  });
  const body = await readJsonBody(req, options.maxBodyBytes);
  if (!body.ok) return sendError(res, body.code, body.message);
  const envelope = parseEnvelope(body.value);
  if ("problem" in envelope) return sendError(res, "invalid_request", envelope.problem);

  const key = req.headers["idempotency-key"];
  const idempotencyKey = typeof key === "string" && key !== "" ? key : envelope.call_id;
  let claim: Claim | undefined;
  if (tool.idempotent) {
    claim = await options.answered.claim(
      envelope.tenant_id,
      tool.name,
      idempotencyKey,
      JSON.stringify(envelope.arguments),
    );
    if (claim.kind === "conflict") {
      return sendError(res, "invalid_request", "this Idempotency-Key came before with other arguments");
    }
    if (claim.kind === "replay") {
      res.setHeader("idempotent-replayed", "true");
      return sendJson(res, 200, claim.result);
    }
  }
  try {
    // past the last wait before the handler: a call whose body or claim was still pending when the
    // service began stopping has not started, so it is refused as one that came after
    if (options.stopping.aborted) return await refuseStopping(req, res);
    if (controller.signal.aborted) {
      const ids = { tool: tool.name, call_id: envelope.call_id, tenant_id: envelope.tenant_id };
      options.logger.info({ ...ids, outcome: "cancelled" }, "the caller went away before the handler ran");
      return;
    }
    await runToolCall(tool, envelope, idempotencyKey, res, controller, options, (result) => {
      if (claim?.kind === "run") claim.settle(result);
    });
  } finally {
    // a handler that threw past its result (it never does: errors become results) leaves no claim behind
    if (claim?.kind === "run") claim.settle(undefined);
  }
}

/** Run the handler and send its result; `answered` gets the result, or undefined when there is none. */
async function runToolCall(
  tool: Tool,
  envelope: CallEnvelope,
  idempotencyKey: string,
  res: ServerResponse,
  controller: AbortController,
  options: CallOptions,
  answered: (result: ResultObject | undefined) => void,
): Promise<void> {
  const started = performance.now();
  const log = options.logger.child({
    tool: tool.name,
    call_id: envelope.call_id,
    tenant_id: envelope.tenant_id,
    session_id: envelope.session_id,
  });
  const onStopping = () => controller.abort(options.stopping.reason);
  // a listener added to an aborted signal never fires. Not AbortSignal.any: on Node 20 the service's
  // signal, which lives as long as the service, would keep every call's signal (nodejs/node#55351)
  if (options.stopping.aborted) onStopping();
  else options.stopping.addEventListener("abort", onStopping, { once: true });

  const streamOptions = { keepAliveMs: options.keepAliveMs, maxBufferedBytes: options.maxProgressBytes * 16 };
  let stream = tool.streaming ? new EventStreamResponse(res, streamOptions) : undefined;
  const ctx: ToolContext = {
    tenant_id: envelope.tenant_id,
    session_id: envelope.session_id,
    call_id: envelope.call_id,
    idempotency_key: idempotencyKey,
    signal: controller.signal,
    inspection:
      envelope.inspection &&
      createInspector(
        envelope.inspection.brainUrl,
        envelope.inspection.token,
        envelope.session_id,
        controller.signal,
      ),
    log,
    progress: (data) => {
      const json = JSON.stringify(data);
      if (json === undefined) throw new TypeError("progress data must be a JSON value");
      if (Buffer.byteLength(json) > options.maxProgressBytes) {
        throw new RangeError(`progress data exceeds ${options.maxProgressBytes} bytes`);
      }
      // after the result there is nothing left to write progress into: a JSON answer's headers are
      // sent, and a stream opened on them would throw out of the handler's timer and end the process
      if (controller.signal.aborted || res.writableEnded || res.destroyed) return;
      stream ??= new EventStreamResponse(res, streamOptions);
      stream.progress(json);
    },
  };

  // stays unset when the handler threw OutcomeUnknown: no result can be true then
  let result: ResultObject | undefined;
  // what a retry with the key gets: nothing when the handler threw because its signal fired, since
  // the work it was stopped from doing never happened
  let kept: ResultObject | undefined;
  let outcome: string;
  let unknownBecause = "";
  if (!tool.validateArguments(envelope.arguments)) {
    const problems = describeErrors(tool.validateArguments.errors, "arguments").slice(0, 5);
    result = errorResult(`invalid arguments for ${tool.name}: ${problems.join("; ")}`);
    kept = result;
    outcome = "invalid_arguments";
  } else {
    try {
      const checked = returnedToResult(tool, await tool.handler(envelope.arguments, ctx));
      result = checked.result;
      kept = result;
      outcome = checked.problem ? "invalid_return" : result.is_error ? "is_error" : "ok";
      if (checked.problem) log.error({ problem: checked.problem }, "the handler returned an invalid result");
    } catch (error) {
      if (error instanceof OutcomeUnknown) {
        outcome = "outcome_unknown";
        unknownBecause = error.message;
      } else {
        result = thrownToResult(tool, error);
        outcome = "threw";
        if (!controller.signal.aborted) {
          kept = result;
          log.warn({ err: error }, "the handler threw");
        }
      }
    }
  }
  options.stopping.removeEventListener("abort", onStopping);
  // a result the handler came to is the work done even if the caller went away: a retry gets it
  answered(kept);
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  if (controller.signal.reason instanceof CallerGone) {
    stream?.abandon();
    log.info({ outcome: "cancelled", duration_ms: durationMs }, "the caller went away before the result");
    return;
  }
  if (result === undefined) {
    stream?.abandon();
    res.destroy();
    log.warn(
      { outcome, reason: unknownBecause, duration_ms: durationMs },
      "the call's outcome is unknown: the connection was closed without a result",
    );
    return;
  }
  if (stream) stream.result(result);
  else sendJson(res, 200, result);
  const dropped = stream?.dropped ? { dropped_progress: stream.dropped } : {};
  log.info({ outcome, duration_ms: durationMs, ...dropped }, "tool call answered");
}
