import type { Secret } from "../../runtime/secret.js";
import {
  AttemptError,
  type AttemptFailure,
  attemptFailure,
  judgeAnswer,
  scrubMessage,
} from "./provider-failure.js";

// biome-ignore lint/suspicious/noExplicitAny: matches any SDK error constructor
type ErrorClass<T> = abstract new (...args: any[]) => T;

interface SdkApiError extends Error {
  status: number | undefined;
  headers: Headers | undefined;
}

/**
 * The error classes of an official SDK. Both SDKs are generated from the same template, so their
 * errors have the same shape and one judge serves both.
 */
export interface SdkErrors<E extends SdkApiError> {
  APIError: ErrorClass<E>;
  APIConnectionError: ErrorClass<Error>;
  APIConnectionTimeoutError: ErrorClass<Error>;
  /** The error body's type and message, where this SDK keeps them. */
  answer: (error: E) => { type: string | undefined; code?: string | undefined; message: string };
}

/** Judge what a model call attempt threw, with the key and key-like strings kept out of the message. */
export function judgeSdkError<E extends SdkApiError>(
  error: unknown,
  sdk: SdkErrors<E>,
  key: Secret | undefined,
): AttemptFailure {
  const failure = judge(error, sdk);
  return { ...failure, message: scrubMessage(failure.message, key) };
}

function judge<E extends SdkApiError>(error: unknown, sdk: SdkErrors<E>): AttemptFailure {
  if (error instanceof AttemptError) return error.failure;
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return attemptFailure("provider_timeout", "the model provider did not answer in time (timeout_seconds)");
  }
  if (error instanceof sdk.APIConnectionError) {
    return attemptFailure("provider_unreachable", `cannot reach the model provider: ${causes(error)}`);
  }
  if (error instanceof sdk.APIError) {
    const { type, code, message } = sdk.answer(error);
    return judgeAnswer({ status: error.status, type, code, message, headers: error.headers });
  }
  // a connection cut while the stream is read surfaces from fetch as a bare TypeError ("terminated")
  if (error instanceof TypeError) {
    return attemptFailure(
      "provider_connection_lost",
      `the connection to the model provider broke: ${causes(error)}`,
    );
  }
  // the SDKs let JSON.parse errors of a garbled event through as they are
  if (error instanceof SyntaxError) {
    return attemptFailure(
      "provider_bad_response",
      `the model provider sent an event that is not JSON: ${error.message}`,
    );
  }
  return attemptFailure("provider_error", error instanceof Error ? error.message : String(error));
}

/** "Connection error. (fetch failed; connect ECONNREFUSED 127.0.0.1:9)": the chain of causes, for people. */
function causes(error: Error): string {
  const messages: string[] = [];
  for (let cause: unknown = error; cause instanceof Error && messages.length < 4; cause = cause.cause) {
    messages.push(cause.message);
  }
  const [first, ...rest] = messages;
  return rest.length > 0 ? `${first} (${rest.join("; ")})` : (first ?? "");
}
