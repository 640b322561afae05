import { ERROR_STATUS, type ErrorCode, type ErrorResponse } from "../../protocol/errors.js";
import { type SessionError, sessionNotFound as sessionNotFoundError } from "../sessions/errors.js";

export class ApiError {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly message: string,
  ) {
    this.status = ERROR_STATUS[code];
  }

  toJSON(): ErrorResponse {
    return { error: { code: this.code, message: this.message } };
  }
}

/** A session's refusal, answered with its code's status. */
export const apiErrorOf = (error: SessionError) => new ApiError(error.code, error.message);

export const sessionNotFound = (id: string) => apiErrorOf(sessionNotFoundError(id));
