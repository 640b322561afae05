import { type SessionError, sessionNotFound as sessionNotFoundError } from "../sessions/errors.js";

/** The API's error codes. They are API: clients branch on them, never on message text. */
export type ApiErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "not_found"
  | "method_not_allowed"
  | "request_timeout"
  | "payload_too_large"
  | "unsupported_media_type"
  | "headers_too_large"
  | "session_busy"
  | "session_closed"
  | "no_turn_running"
  | "internal"
  | "store_unavailable";

const STATUS: Record<ApiErrorCode, number> = {
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
  internal: 500,
  store_unavailable: 503,
};

export class ApiError {
  readonly status: number;

  constructor(
    readonly code: ApiErrorCode,
    readonly message: string,
  ) {
    this.status = STATUS[code];
  }

  toJSON(): { error: { code: ApiErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/** A session's refusal, answered with its code's status. */
export const apiErrorOf = (error: SessionError) => new ApiError(error.code, error.message);

export const sessionNotFound = (id: string) => apiErrorOf(sessionNotFoundError(id));
