import type { Dispatcher } from "undici";
import type { ToolBinding } from "../config/load.js";
import { CallAbort } from "./call-abort.js";
import { classifyError, HEADERS_TIMEOUT, TIMEOUT } from "./classify-error.js";
import { ToolFailure } from "./outcome.js";
import {
  type CallOutcome,
  type ReadLimits,
  type ResponseBody,
  type ResponseHead,
  readToolResponse,
} from "./read-result.js";

export interface ExchangeLimits extends ReadLimits {
  headersTimeoutMs: number;
}

/**
 * One tool call's request and response, as undici's dispatcher drives it: the handler it is
 * dispatched with, which times the call, reads the response as it comes and settles `outcome`
 * exactly once. undici's `request()` would wrap the body in a stream and the response in a
 * promise: a call cost 10–15 µs more CPU that way in process, 40 µs in the overhead run
 * (BENCHMARKS.md).
 *
 * The call's limits are its own timers, not undici's (which tick at about one second): the whole
 * call from the start, the headers from the moment the request is written on a connected socket,
 * so that time spent connecting belongs to the connection, and a call that never connected was
 * never sent (`unreachable`, not `headers_timeout`).
 */
export class ToolExchange implements Dispatcher.DispatchHandler {
  /** Ends the call early: its limits, and its session's interruption through `follow`. */
  readonly abort = new CallAbort((reason) => this.#aborted(reason));
  readonly outcome: Promise<CallOutcome>;
  /** The response's status, once its head came. */
  statusCode: number | undefined;
  /** How much of the body was read: Brain stops at its limits and at the result event. */
  bytesRead = 0;

  #settle!: (outcome: CallOutcome) => void;
  #settled = false;
  /**
   * undici's abort of the request, from the moment it is written on a connected socket: until
   * then the call was never sent.
   */
  #abortRequest: (() => void) | undefined;
  #body: ResponseBody | undefined;
  readonly #callTimer: NodeJS.Timeout;
  #headersTimer: NodeJS.Timeout | undefined;
  #bodyTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly binding: ToolBinding,
    private readonly limits: ExchangeLimits,
    private readonly onProgress: (data: unknown) => void,
  ) {
    this.outcome = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#callTimer = setTimeout(() => this.abort.abort(TIMEOUT), binding.timeoutMs);
  }

  onConnect(abort: () => void): void {
    this.#abortRequest = abort;
    // a call that ended while connecting: undici only lets go of the request now
    if (this.#settled) {
      abort();
      return;
    }
    this.#headersTimer = setTimeout(() => this.abort.abort(HEADERS_TIMEOUT), this.limits.headersTimeoutMs);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // an informational response (103 Early Hints, say) comes before the real one: it is not it
    if (this.#settled || statusCode < 200) return true;
    clearTimeout(this.#headersTimer);
    this.statusCode = statusCode;
    const read = readToolResponse(headOf(statusCode, rawHeaders), this.binding, this.limits, this.onProgress);
    if (read instanceof ToolFailure) {
      this.#finish(read, true);
      return true;
    }
    this.#body = read;
    if (read.deadlineMs !== undefined) {
      this.#bodyTimer = setTimeout(() => this.#broken(undefined), read.deadlineMs);
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled || !this.#body) return true;
    this.bytesRead += chunk.length;
    let outcome: CallOutcome | undefined;
    try {
      outcome = this.#body.data(chunk);
    } catch (error) {
      outcome = classifyError(error, { abortReason: undefined, written: true }, this.binding);
    }
    if (outcome) this.#finish(outcome, true);
    return true;
  }

  onComplete(): void {
    if (this.#settled) return;
    if (this.#body) this.#finish(this.#body.end(), false);
    else this.#broken(undefined);
  }

  onError(error: Error): void {
    this.#broken(error);
  }

  /** The body broke off (`error`) or ran out of time: the head's outcome, or the break's. */
  #broken(error: unknown): void {
    if (this.#settled) return;
    const outcome =
      this.#body?.broken() ??
      classifyError(error, { abortReason: undefined, written: this.#written() }, this.binding);
    this.#finish(outcome, true);
  }

  #aborted(reason: unknown): void {
    if (this.#settled) return;
    this.#finish(
      classifyError(undefined, { abortReason: reason, written: this.#written() }, this.binding),
      true,
    );
  }

  #written(): boolean {
    return this.#abortRequest !== undefined;
  }

  /** Settle the call; `stopReading` when the response is not over, so its connection goes. */
  #finish(outcome: CallOutcome, stopReading: boolean): void {
    this.#settled = true;
    clearTimeout(this.#callTimer);
    clearTimeout(this.#headersTimer);
    clearTimeout(this.#bodyTimer);
    if (stopReading) this.#abortRequest?.();
    this.#settle(outcome);
  }
}

/** The status and the headers a result depends on, from undici's raw name and value pairs. */
function headOf(statusCode: number, raw: Buffer[]): ResponseHead {
  let contentType: string | undefined;
  let contentLength: string | undefined;
  let lengths = 0;
  let location: string | undefined;
  let locations = 0;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const bytes = raw[index] as Buffer;
    // only names as long as the three are decoded: date, connection, keep-alive are not
    if (bytes.length !== 12 && bytes.length !== 14 && bytes.length !== 8) continue;
    const name = bytes.toString("latin1").toLowerCase();
    if (name === "content-type") {
      const value = (raw[index + 1] as Buffer).toString("latin1");
      contentType = contentType === undefined ? value : `${contentType},${value}`;
    } else if (name === "content-length") {
      contentLength = (raw[index + 1] as Buffer).toString("latin1");
      lengths++;
    } else if (name === "location") {
      location = (raw[index + 1] as Buffer).toString("latin1");
      locations++;
    }
  }
  return {
    statusCode,
    contentType,
    contentLength: lengths === 1 ? contentLength : undefined,
    location: locations === 1 ? location : undefined,
  };
}
