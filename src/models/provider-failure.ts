import type { ProviderFailureCode } from "../../protocol/turn-failures.js";
import type { Secret } from "../../runtime/secret.js";

/** Model calls are safe to repeat (nothing acts on a reply until it is complete), so these are retried. */
const RETRYABLE: ReadonlySet<ProviderFailureCode> = new Set([
  "provider_rate_limited",
  "provider_overloaded",
  "provider_server_error",
  "provider_timeout",
  "provider_unreachable",
  "provider_connection_lost",
]);

/** One failed attempt of a model call, judged. */
export interface AttemptFailure {
  code: ProviderFailureCode;
  /** For people, and for `turn.failed`: never holds a key. */
  message: string;
  retryable: boolean;
  /** The wait the provider asked for (`retry-after-ms`, `retry-after`), when it did. */
  retryAfterMs?: number;
}

/** A failure Brain's own code found in an attempt (a timeout, a stream that ended early), already judged. */
export class AttemptError extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.message);
    this.name = "AttemptError";
  }
}

export function attemptFailure(code: ProviderFailureCode, message: string): AttemptFailure {
  return { code, message, retryable: RETRYABLE.has(code) };
}

/** What a provider's error answer says: an HTTP error status, or an error event inside a stream. */
export interface ProviderAnswer {
  /** Undefined for an error event that arrived inside a 200 stream. */
  status: number | undefined;
  /** The body's error type (`overloaded_error`, `invalid_request_error`, …), when it has one. */
  type: string | undefined;
  /** The body's error code, where the API gives one (OpenAI's `context_length_exceeded`). */
  code?: string | undefined;
  message: string;
  headers: Headers | undefined;
}

/**
 * How the APIs say a request passed the model's context window: OpenAI's code (and the message
 * compatible servers copy without it), Anthropic's "prompt is too long: N tokens > M maximum" and
 * "input length and `max_tokens` exceed context limit".
 */
const CONTEXT_MESSAGE = /prompt is too long|exceed context limit|maximum context length/i;

function isContextExceeded(answer: ProviderAnswer): boolean {
  return (
    answer.status === 400 &&
    (answer.code === "context_length_exceeded" || CONTEXT_MESSAGE.test(answer.message))
  );
}

/** Error types both providers (and the servers that copy them) put in error bodies and stream events. */
const CODE_BY_TYPE: Record<string, ProviderFailureCode> = {
  rate_limit_error: "provider_rate_limited",
  overloaded_error: "provider_overloaded",
  api_error: "provider_server_error",
  server_error: "provider_server_error",
  timeout_error: "provider_timeout",
  authentication_error: "provider_auth_failed",
  permission_error: "provider_auth_failed",
  invalid_request_error: "provider_rejected",
  not_found_error: "provider_rejected",
  request_too_large: "provider_rejected",
};

function codeFor(status: number | undefined, type: string | undefined): ProviderFailureCode {
  if (status === 429) return "provider_rate_limited";
  if (status === 529) return "provider_overloaded";
  if (status === 401 || status === 403) return "provider_auth_failed";
  if (status === 408) return "provider_timeout";
  // the official SDKs retry 409 too: the API uses it for lock timeouts
  if (status === 409 || (status !== undefined && status >= 500)) return "provider_server_error";
  if (status !== undefined && status >= 400) return "provider_rejected";
  return (type && CODE_BY_TYPE[type]) || "provider_error";
}

/** Judge a provider's error answer as the official SDKs would, honouring `x-should-retry`. */
export function judgeAnswer(answer: ProviderAnswer, now = Date.now()): AttemptFailure {
  const code = isContextExceeded(answer) ? "context_exceeded" : codeFor(answer.status, answer.type);
  const said = [answer.status ?? "error event", answer.type && `(${answer.type})`].filter(Boolean).join(" ");
  const failure = attemptFailure(code, `the model provider answered ${said}: ${answer.message}`);
  const shouldRetry = answer.headers?.get("x-should-retry");
  if (shouldRetry === "true" || shouldRetry === "false") failure.retryable = shouldRetry === "true";
  const retryAfterMs = parseRetryAfter(answer.headers, now);
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  return failure;
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const MAX_MESSAGE_CHARS = 1000;
// keys echoed back by an API ("Incorrect API key provided: sk-proj-…abcd"), masked or not
const KEY_LIKE = /\b(?:sk|key)-[A-Za-z0-9_*-]{6,}/g;

/** A provider's message made safe to store: without the key, key-like strings, or unbounded length. */
export function scrubMessage(message: string, key: Secret | undefined): string {
  let text = message;
  const value = key?.reveal();
  if (value) text = text.split(value).join("[redacted]");
  text = text.replace(KEY_LIKE, "[redacted]");
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}
