import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "./errors.js";

/**
 * The error for a request Node's HTTP parser refused before Brain saw it, so that malformed HTTP
 * gets the same JSON error body as every other refusal instead of a bare status line.
 */
export function clientErrorFor(error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new ApiError("headers_too_large", "the request's headers are too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ApiError("request_timeout", "the request did not arrive in time");
    default:
      return new ApiError("invalid_request", "the request is not valid HTTP/1.1");
  }
}

/** A whole HTTP/1.1 response carrying `error`, for a socket the parser has given up on. */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify(error);
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** The server's `clientError` listener: answer once if nothing was sent yet, then close. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // a response already under way (or a peer that left) cannot take another status line; Node's
  // own default answer makes the same check on the same internal field
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === "ECONNRESET" || !socket.writable || started) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(clientErrorFor(error)));
}
