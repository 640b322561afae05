import type { ErrorCode } from "../../protocol/errors.js";

/** Why a session refused what was asked of it. The API answers each with its code's status. */
export type SessionErrorCode = Extract<
  ErrorCode,
  | "not_found"
  | "invalid_request"
  | "session_busy"
  | "session_closed"
  | "no_turn_running"
  | "call_not_waiting"
  | "queue_full"
  | "too_many_turns"
>;

export class SessionError {
  constructor(
    readonly code: SessionErrorCode,
    readonly message: string,
  ) {}
}

export const sessionNotFound = (id: string) =>
  new SessionError("not_found", `no session ${JSON.stringify(id)}`);

export const sessionClosed = () => new SessionError("session_closed", "the session is closed");
