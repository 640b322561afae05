import { type Static, Type } from "@sinclair/typebox";
import { StringEnum } from "./validation.js";

/**
 * The codes of HTTP error answers, `{"error": {"code", "message"}}`: Brain's API and the tool kit's
 * services answer with these. They are API: clients branch on them, never on message text.
 */
export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "request_timeout",
  "payload_too_large",
  "unsupported_media_type",
  "headers_too_large",
  "session_busy",
  "session_closed",
  "no_turn_running",
  "call_not_waiting",
  "queue_full",
  "idempotency_key_in_use",
  "idempotency_key_reused",
  "rate_limited",
  "too_many_turns",
  "too_many_streams",
  "internal",
  "store_unavailable",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The status each code is answered with. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  session_busy: 409,
  session_closed: 409,
  no_turn_running: 409,
  call_not_waiting: 409,
  queue_full: 409,
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  rate_limited: 429,
  too_many_turns: 429,
  too_many_streams: 429,
  internal: 500,
  store_unavailable: 503,
};

export const ErrorResponseSchema = Type.Object({
  error: Type.Object({ code: StringEnum(ERROR_CODES), message: Type.String() }),
});

export type ErrorResponse = Static<typeof ErrorResponseSchema>;
