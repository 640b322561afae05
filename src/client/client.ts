import type { Static } from "@sinclair/typebox";
import type { CatalogSchema, SessionListSchema, SessionSchema } from "../api/wire.js";
import type { SessionEvent, StoredEvent } from "../sessions/events.js";
import type { SessionConfigInput } from "../sessions/session-config.js";
import { SseParser } from "../tools/sse-parser.js";

export type Session = Static<typeof SessionSchema>;
export type SessionList = Static<typeof SessionListSchema>;
export type Catalog = Static<typeof CatalogSchema>;
export type { SessionConfigInput, SessionEvent, StoredEvent };

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
    return this.#json("GET", "/catalog");
  }

  createSession(config: SessionConfigInput = {}): Promise<Session> {
    return this.#json("POST", "/sessions", { config });
  }

  listSessions(options: { limit?: number; cursor?: string } = {}): Promise<SessionList> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor !== undefined) query.set("cursor", options.cursor);
    return this.#json("GET", `/sessions${query.size > 0 ? `?${query}` : ""}`);
  }

  getSession(id: string): Promise<Session> {
    return this.#json("GET", `/sessions/${encodeURIComponent(id)}`);
  }

  sendMessage(id: string, content: string): Promise<{ seq: number }> {
    return this.#json("POST", `/sessions/${encodeURIComponent(id)}/messages`, { content });
  }

  async events(id: string, options: { after?: number; limit?: number } = {}): Promise<StoredEvent[]> {
    const query = new URLSearchParams({ after: String(options.after ?? 0) });
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    const body = await this.#json<{ events: StoredEvent[] }>(
      "GET",
      `/sessions/${encodeURIComponent(id)}/events?${query}`,
    );
    return body.events;
  }

  interrupt(id: string): Promise<Session> {
    return this.#json("POST", `/sessions/${encodeURIComponent(id)}/interrupt`);
  }

  close(id: string): Promise<Session> {
    return this.#json("DELETE", `/sessions/${encodeURIComponent(id)}`);
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
        for (const event of parser.push(chunk)) yield JSON.parse(event.data) as SessionEvent;
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await fetch(`${this.#base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal,
      });
      if (!response.ok) throw await toError(response);
      return (await response.json()) as T;
    } catch (error) {
      if (signal.aborted) throw new BrainTimeoutError(`${method} ${path.split("?")[0]}`, this.#timeoutMs);
      throw error;
    }
  }
}

async function toError(response: Response): Promise<BrainApiError> {
  const text = await response.text();
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return new BrainApiError(response.status, error.code, error.message);
  } catch {
    return new BrainApiError(response.status, "http_error", `${response.status} ${text.slice(0, 200)}`);
  }
}
