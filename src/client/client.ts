import type { Catalog } from "../../protocol/catalog.js";
import type { SessionEvent, StoredEvent } from "../../protocol/events.js";
import { check, type Validator } from "../../protocol/problems.js";
import type {
  ApprovalBody,
  OnBusy,
  PostMessageAnswer,
  Session,
  SessionConfigInput,
  SessionList,
} from "../../protocol/session.js";
import { SseLimitError, SseParser } from "../../protocol/sse.js";
import { answers } from "./answers.js";
import { BrainApiError, BrainProtocolError, BrainTimeoutError, BrainUnreachableError } from "./errors.js";

export type {
  ApprovalBody,
  Catalog,
  OnBusy,
  PostMessageAnswer,
  Session,
  SessionConfigInput,
  SessionEvent,
  SessionList,
  StoredEvent,
};
export { BrainApiError, BrainProtocolError, BrainTimeoutError, BrainUnreachableError };

const MAX_EVENT_BYTES = 64 * 1024 * 1024;
/** The wait before a reconnect when the stream named none (Brain names 1 s with `retry:`). */
const DEFAULT_RETRY_MS = 1000;
/** Reconnects back off from the stream's `retry:` up to this. */
const MAX_RETRY_MS = 30_000;
/** A request that may be repeated (a GET) is tried this many times more when Brain cannot be reached. */
const SAFE_RETRIES = 2;
/** Three of Brain's keep-alive comments (one every 15 s) missed in a row: the connection is dead. */
const DEFAULT_SILENCE_MS = 45_000;

export interface BrainClientOptions {
  /** Each request's time limit (not an event stream's, which lasts): 30 s unless given. */
  timeoutMs?: number;
}

/** Options every request takes. */
export interface RequestOptions {
  /** Abandons the request: it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Where an event stream is, for a status line: connected, or waiting to reconnect after a drop. */
export type StreamStatus =
  | { state: "connected"; after: number }
  | { state: "reconnecting"; after: number; delayMs: number; error: Error };

export interface StreamOptions extends RequestOptions {
  /** Start after this stored event's seq (0: the whole history). */
  after?: number;
  /**
   * Reconnect when the connection drops or Brain answers 5xx, resuming after the last stored event
   * seen (`Last-Event-ID`): no event twice, none missed. On unless false; live-only events sent
   * while disconnected are not resent.
   */
  reconnect?: boolean;
  /**
   * A stream that brings nothing for this long, not even Brain's keep-alive comment (one every
   * 15 s), is taken for dropped: a connection that died without a word (a laptop that slept, a
   * NAT that forgot it) would otherwise wait for good. Default 45,000 ms.
   */
  silenceMs?: number;
  onStatus?: (status: StreamStatus) => void;
}

/**
 * A typed client for Brain's HTTP API, for Node and browsers: `fetch` only, event streams read as
 * bytes, every answer checked against its schema in protocol/.
 */
export class BrainClient {
  readonly #base: string;
  readonly #timeoutMs: number;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    options: BrainClientOptions = {},
  ) {
    this.#base = baseUrl.replace(/\/+$/, "");
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  catalog(options?: RequestOptions): Promise<Catalog> {
    return this.#json("GET", "/catalog", answers.catalog, options);
  }

  /** `idempotencyKey`: a retry with the same key gets the first answer again and creates nothing. */
  createSession(
    config: SessionConfigInput = {},
    options?: RequestOptions & { idempotencyKey?: string },
  ): Promise<Session> {
    return this.#json("POST", "/sessions", answers.session, { ...options, body: { config } });
  }

  listSessions(
    page: { limit?: number; cursor?: string } = {},
    options?: RequestOptions,
  ): Promise<SessionList> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.cursor !== undefined) query.set("cursor", page.cursor);
    const search = query.toString();
    return this.#json("GET", `/sessions${search ? `?${search}` : ""}`, answers.sessionList, options);
  }

  getSession(id: string, options?: RequestOptions): Promise<Session> {
    return this.#json("GET", sessionPath(id), answers.session, options);
  }

  /**
   * Send a user message: its turn starts (`seq`), or, with `onBusy: "enqueue"` while a turn runs,
   * it waits in the session's queue (`queued`, its place). `idempotencyKey`: a retry with the same
   * key gets the first answer again and stores nothing twice. With `traceparent` (W3C), the turn's
   * spans are children of that span.
   */
  sendMessage(
    id: string,
    content: string,
    options: RequestOptions & { onBusy?: OnBusy; idempotencyKey?: string; traceparent?: string } = {},
  ): Promise<PostMessageAnswer> {
    const { onBusy, traceparent, ...rest } = options;
    return this.#json("POST", sessionPath(id, "/messages"), answers.posted, {
      ...rest,
      body: { content, ...(onBusy && { on_busy: onBusy }) },
      ...(traceparent && { headers: { traceparent } }),
    });
  }

  /** Approve or deny a call that waits for approval (`tool.approval_requested`). */
  answerApproval(
    id: string,
    callId: string,
    answer: ApprovalBody,
    options?: RequestOptions,
  ): Promise<{ call_id: string; decision: ApprovalBody["decision"] }> {
    return this.#json(
      "POST",
      sessionPath(id, `/calls/${encodeURIComponent(callId)}/approval`),
      answers.approval,
      { ...options, body: answer },
    );
  }

  /** One page of stored events after `after` (JSON). */
  async events(
    id: string,
    page: { after?: number; limit?: number } = {},
    options?: RequestOptions,
  ): Promise<StoredEvent[]> {
    const query = new URLSearchParams({ after: String(page.after ?? 0) });
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    const what = `GET ${sessionPath(id, "/events")}`;
    const body = await this.#json(
      "GET",
      `${sessionPath(id, "/events")}?${query}`,
      answers.eventPage,
      options,
    );
    return body.events.map((item, index) => {
      const checked = check(answers.event, item, `events[${index}]`);
      if (!checked.ok) throw new BrainProtocolError(what, checked.problems);
      if (!("seq" in checked.value))
        throw new BrainProtocolError(what, [`events[${index}]: is not a stored event`]);
      return checked.value;
    });
  }

  interrupt(id: string, options?: RequestOptions): Promise<Session> {
    return this.#json("POST", sessionPath(id, "/interrupt"), answers.session, options);
  }

  close(id: string, options?: RequestOptions): Promise<Session> {
    return this.#json("DELETE", sessionPath(id), answers.session, options);
  }

  /**
   * Stored events after `after`, then live ones, until the session closes (its `session.closed`
   * is the last event), Brain ends the stream, or `signal` fires (the iteration then just ends).
   */
  async *streamEvents(id: string, options: StreamOptions = {}): AsyncGenerator<SessionEvent> {
    const { signal, onStatus } = options;
    const reconnect = options.reconnect !== false;
    let after = options.after ?? 0;
    let retryMs = DEFAULT_RETRY_MS;
    let failures = 0;
    const silenceMs = options.silenceMs ?? DEFAULT_SILENCE_MS;
    for (;;) {
      let dropped: Error;
      // a listener added to a signal that already fired would never run
      if (signal?.aborted) return;
      // this connection's end: the caller's signal, or a silence too long
      const connection = new AbortController();
      const follow = () => connection.abort(signal?.reason);
      signal?.addEventListener("abort", follow, { once: true });
      // counted only while waiting on Brain, not while the caller takes its time over an event
      let silence: ReturnType<typeof setTimeout> | undefined;
      const waitOnBrain = () => {
        silence = setTimeout(
          () => connection.abort(new Error(`nothing came from Brain for ${silenceMs} ms`)),
          silenceMs,
        );
      };
      try {
        waitOnBrain();
        const response = await fetch(`${this.#base}${sessionPath(id, "/events")}?after=${after}`, {
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            accept: "text/event-stream",
            // the stream's own resume point; `after` says the same to a server that ignores it
            ...(after > 0 && { "last-event-id": String(after) }),
          },
          signal: connection.signal,
        });
        clearTimeout(silence);
        if (!response.ok || !response.body) {
          const error = await toError(response);
          if (response.status < 500) throw error;
          dropped = error;
        } else {
          failures = 0;
          onStatus?.({ state: "connected", after });
          const parser = new SseParser(() => MAX_EVENT_BYTES);
          const reader = response.body.getReader();
          try {
            for (;;) {
              waitOnBrain();
              const { done, value } = await reader.read();
              clearTimeout(silence);
              // Brain ended the stream itself: the session is closed, or this reader was let go
              if (done) return;
              for (const frame of parser.push(value)) {
                const event = parsed(frame.data, answers.event, "an event");
                if ("seq" in event) {
                  if (event.seq <= after) continue;
                  after = event.seq;
                }
                yield event;
                if (event.type === "session.closed") return;
              }
              retryMs = parser.retryMs ?? retryMs;
            }
          } finally {
            // the caller stopped early, or the stream failed: let go of the connection either way
            reader.cancel().catch(() => {});
          }
        }
      } catch (error) {
        if (signal?.aborted) return;
        // what Brain said, or what it should never have sent: connecting again would meet it again
        if (
          error instanceof BrainApiError ||
          error instanceof BrainProtocolError ||
          error instanceof SseLimitError
        ) {
          throw error;
        }
        const silent = connection.signal.aborted ? connection.signal.reason : undefined;
        dropped =
          silent instanceof Error ? silent : error instanceof Error ? error : new Error(String(error));
      } finally {
        clearTimeout(silence);
        signal?.removeEventListener("abort", follow);
      }
      if (!reconnect) throw dropped;
      const delayMs = Math.min(retryMs * 2 ** failures, MAX_RETRY_MS);
      failures++;
      onStatus?.({ state: "reconnecting", after, delayMs, error: dropped });
      if (!(await sleep(delayMs, signal))) return;
    }
  }

  async #json<T>(
    method: "GET" | "POST" | "DELETE",
    path: string,
    validate: Validator<T>,
    options: RequestOptions & {
      body?: unknown;
      idempotencyKey?: string;
      headers?: Record<string, string>;
    } = {},
  ): Promise<T> {
    const what = `${method} ${path.split("?")[0]}`;
    // only a GET, or a POST with an idempotency key, is safe to send again: another POST or a
    // DELETE Brain may have done already
    const attempts = method === "GET" || options.idempotencyKey !== undefined ? 1 + SAFE_RETRIES : 1;
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      try {
        const response = await fetch(`${this.#base}${path}`, {
          method,
          headers: {
            ...options.headers,
            authorization: `Bearer ${this.apiKey}`,
            ...(options.body !== undefined && { "content-type": "application/json" }),
            ...(options.idempotencyKey !== undefined && { "idempotency-key": options.idempotencyKey }),
          },
          ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
          signal,
        });
        if (!response.ok) throw await toError(response);
        return parsed(await response.text(), validate, what);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (timeout.aborted) throw new BrainTimeoutError(what, this.#timeoutMs);
        const failure = error instanceof TypeError ? new BrainUnreachableError(what, error) : error;
        if (!retryable(failure) || attempt >= attempts) throw failure;
      }
      if (!(await sleep(250 * 2 ** attempt, options.signal))) throw options.signal?.reason;
    }
  }
}

/**
 * Whether a GET that met `error` may be tried again soon with some hope: a dropped connection or a
 * store that is away for a moment (503). Not a refused connection: nothing listens there, and a
 * caller waiting for a Brain that is starting waits on its own terms.
 */
function retryable(error: unknown): boolean {
  if (error instanceof BrainApiError) return error.status === 503;
  return (
    error instanceof BrainUnreachableError && (error.cause as { code?: unknown })?.code !== "ECONNREFUSED"
  );
}

const sessionPath = (id: string, rest = "") => `/sessions/${encodeURIComponent(id)}${rest}`;

/** Wait `ms`, or less when `signal` fires: false then. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve(!signal?.aborted);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** `text` as JSON of the shape `validate` checks, or a BrainProtocolError saying what is wrong. */
function parsed<T>(text: string, validate: Validator<T>, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BrainProtocolError(what, ["not JSON"]);
  }
  const checked = check(validate, value);
  if (!checked.ok) throw new BrainProtocolError(what, checked.problems);
  return checked.value;
}

async function toError(response: Response): Promise<BrainApiError> {
  const text = await response.text();
  try {
    const { error } = parsed(text, answers.error, "an error");
    return new BrainApiError(response.status, error.code, error.message);
  } catch {
    return new BrainApiError(response.status, "http_error", `${response.status} ${text.slice(0, 200)}`);
  }
}
