import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ERROR_STATUS, type ErrorCode, type ErrorResponse } from "../protocol/errors.js";

// What Node's HTTP server answers on its own, before a request handler sees anything, answered
// instead with the JSON error body of every other refusal: by Brain's API and the kit's services.

interface Refusal {
  code: ErrorCode;
  message: string;
}

/** The refusal of a request Node's HTTP parser gave up on. */
function clientErrorFor(error: NodeJS.ErrnoException): Refusal {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { code: "headers_too_large", message: "the request's headers are too large" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { code: "request_timeout", message: "the request did not arrive in time" };
    default:
      return { code: "invalid_request", message: "the request is not valid HTTP/1.1" };
  }
}

/** A whole HTTP/1.1 response carrying the refusal, for a socket no response object owns. */
function rawErrorResponse({ code, message }: Refusal): string {
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({ error: { code, message } } satisfies ErrorResponse);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** The server's `clientError` listener: answer once if nothing was sent yet, then close. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // a response already under way (or a peer that left) cannot take another status line; Node's
  // own default answer makes the same check on the same internal field
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === "ECONNRESET" || !socket.writable || started) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(clientErrorFor(error)));
}

/**
 * Malformed HTTP, an `Expect` other than 100-continue and CONNECT, which Node answers with a bare
 * status line or by closing the connection, get JSON errors. (A missing Host header is the
 * handler's to refuse: the server is created with `requireHostHeader: false`.)
 */
export function answerWhatNodeWould(server: Server): void {
  server.on("clientError", answerClientError);
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({
      error: { code: "invalid_request", message: "Expect: only 100-continue is understood" },
    } satisfies ErrorResponse);
    res.writeHead(ERROR_STATUS.invalid_request, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
    });
    res.end(body);
  });
  server.on("connect", (_req: IncomingMessage, socket: Duplex) =>
    socket.end(rawErrorResponse({ code: "method_not_allowed", message: "CONNECT is not served here" })),
  );
}

/** What reading a request throws when its client hung up, or Node timed it out, mid-body. */
const CLIENT_LEFT = new Set(["ECONNRESET", "ERR_STREAM_PREMATURE_CLOSE"]);

/**
 * Why a request failed because its client left mid-request (its error's code), else undefined:
 * no failure of the server's, and logged as one it would let any client flood the error log.
 */
export function clientLeft(req: IncomingMessage, error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return req.destroyed && typeof code === "string" && CLIENT_LEFT.has(code) ? code : undefined;
}
