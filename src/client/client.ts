import { type Catalog, CatalogSchema } from "../../protocol/catalog.js";
import { ErrorResponseSchema } from "../../protocol/errors.js";
import {
  EventListSchema,
  type SessionEvent,
  SessionEventSchema,
  type StoredEvent,
} from "../../protocol/events.js";
import {
  ApprovalAnswerSchema,
  type ApprovalBody,
  type OnBusy,
  type PostMessageAnswer,
  PostMessageAnswerSchema,
  type Session,
  type SessionConfigInput,
  type SessionList,
  SessionListSchema,
  SessionSchema,
} from "../../protocol/session.js";
import { SseParser } from "../../protocol/sse.js";
import { check, compile, type Validator } from "../../protocol/validation.js";

export type {
  Catalog,
  OnBusy,
  PostMessageAnswer,
  Session,
  SessionConfigInput,
  SessionEvent,
  SessionList,
  StoredEvent,
};

// every answer is checked against its schema before a caller sees it
const answers = {
  catalog: compile<Catalog>(CatalogSchema),
  session: compile<Session>(SessionSchema),
  sessionList: compile<SessionList>(SessionListSchema),
  posted: compile<PostMessageAnswer>(PostMessageAnswerSchema),
  approval: compile<{ call_id: string; decision: ApprovalBody["decision"] }>(ApprovalAnswerSchema),
  events: compile<{ events: StoredEvent[] }>(EventListSchema),
  event: compile<SessionEvent>(SessionEventSchema),
  error: compile<{ error: { code: string; message: string } }>(ErrorResponseSchema),
};

/** An error answer of Brain's API, with its stable code. */
export class BrainApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "BrainApiError";
  }
}

/** Brain answered with something that is not what its API says: a wrong URL, or a proxy in between. */
export class BrainProtocolError extends Error {
  constructor(what: string, problems: readonly string[]) {
    super(`Brain's answer to ${what} is not what its API says: ${problems.slice(0, 3).join("; ")}`);
    this.name = "BrainProtocolError";
  }
}

/** Brain did not answer a request in the client's time limit. */
export class BrainTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`Brain did not answer ${what} within ${timeoutMs / 1000} s`);
    this.name = "BrainTimeoutError";
  }
}

const MAX_EVENT_BYTES = 64 * 1024 * 1024;

export interface BrainClientOptions {
  /** Each request's time limit (not an event stream's, which lasts): 30 s unless given. */
  timeoutMs?: number;
}

/** A typed client for Brain's HTTP API. */
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

  catalog(): Promise<Catalog> {
    return this.#json("GET", "/catalog", answers.catalog);
  }

  createSession(config: SessionConfigInput = {}): Promise<Session> {
    return this.#json("POST", "/sessions", answers.session, { config });
  }

  listSessions(options: { limit?: number; cursor?: string } = {}): Promise<SessionList> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor !== undefined) query.set("cursor", options.cursor);
    return this.#json("GET", `/sessions${query.size > 0 ? `?${query}` : ""}`, answers.sessionList);
  }

  getSession(id: string): Promise<Session> {
    return this.#json("GET", `/sessions/${encodeURIComponent(id)}`, answers.session);
  }

  /**
   * Send a user message: its turn starts (`seq`), or, with `onBusy: "enqueue"` while a turn runs,
   * it waits in the session's queue (`queued`, its place). With `traceparent` (W3C), the turn's
   * spans are children of that span.
   */
  sendMessage(
    id: string,
    content: string,
    options: { onBusy?: OnBusy; traceparent?: string } = {},
  ): Promise<PostMessageAnswer> {
    return this.#json(
      "POST",
      `/sessions/${encodeURIComponent(id)}/messages`,
      answers.posted,
      { content, ...(options.onBusy && { on_busy: options.onBusy }) },
      options.traceparent ? { traceparent: options.traceparent } : {},
    );
  }

  /** Approve or deny a call that waits for approval (`tool.approval_requested`). */
  answerApproval(
    id: string,
    callId: string,
    answer: ApprovalBody,
  ): Promise<{ call_id: string; decision: ApprovalBody["decision"] }> {
    return this.#json(
      "POST",
      `/sessions/${encodeURIComponent(id)}/calls/${encodeURIComponent(callId)}/approval`,
      answers.approval,
      answer,
    );
  }

  async events(id: string, options: { after?: number; limit?: number } = {}): Promise<StoredEvent[]> {
    const query = new URLSearchParams({ after: String(options.after ?? 0) });
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    const body = await this.#json(
      "GET",
      `/sessions/${encodeURIComponent(id)}/events?${query}`,
      answers.events,
    );
    return body.events;
  }

  interrupt(id: string): Promise<Session> {
    return this.#json("POST", `/sessions/${encodeURIComponent(id)}/interrupt`, answers.session);
  }

  close(id: string): Promise<Session> {
    return this.#json("DELETE", `/sessions/${encodeURIComponent(id)}`, answers.session);
  }

  /** Stored events after `after`, then live ones, until the session closes or `signal` fires. */
  async *streamEvents(
    id: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<SessionEvent> {
    const response = await fetch(
      `${this.#base}/sessions/${encodeURIComponent(id)}/events?after=${options.after ?? 0}`,
      {
        headers: { authorization: `Bearer ${this.apiKey}`, accept: "text/event-stream" },
        ...(options.signal && { signal: options.signal }),
      },
    );
    if (!response.ok || !response.body) throw await toError(response);
    const parser = new SseParser(() => MAX_EVENT_BYTES);
    try {
      for await (const chunk of response.body) {
        for (const event of parser.push(chunk)) yield parsed(event.data, answers.event, "an event");
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
  }

  async #json<T>(
    method: string,
    path: string,
    validate: Validator<T>,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await fetch(`${this.#base}${path}`, {
        method,
        headers: {
          ...headers,
          authorization: `Bearer ${this.apiKey}`,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal,
      });
      if (!response.ok) throw await toError(response);
      return parsed(await response.text(), validate, `${method} ${path.split("?")[0]}`);
    } catch (error) {
      if (signal.aborted) throw new BrainTimeoutError(`${method} ${path.split("?")[0]}`, this.#timeoutMs);
      throw error;
    }
  }
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
