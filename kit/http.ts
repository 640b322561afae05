import type { IncomingMessage, ServerResponse } from "node:http";
import { finished } from "node:stream/promises";
import { ERROR_STATUS, type ErrorCode } from "../protocol/errors.js";

/**
 * The codes of the kit's HTTP error answers, `{"error": {"code", "message"}}`: the protocol's own,
 * and `service_stopping`, which only a tool service answers.
 */
export type HttpErrorCode =
  | Extract<
      ErrorCode,
      | "unauthorized"
      | "not_found"
      | "method_not_allowed"
      | "unsupported_media_type"
      | "payload_too_large"
      | "invalid_request"
    >
  | "service_stopping";

const STATUS: Readonly<Record<HttpErrorCode, number>> = {
  ...ERROR_STATUS,
  // a 4xx, not 503: Brain takes a 5xx for "the tool may have run" and a 4xx for "the tool did not
  // run" (docs/protocol.md, The answer), and the call was not started. 421 is the status a client
  // may send again on another connection whatever its method (RFC 9110, section 15.5.20).
  service_stopping: 421,
};

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}

export function sendError(
  res: ServerResponse,
  code: HttpErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, STATUS[code], { error: { code, message } });
}

export function sendUnauthorized(res: ServerResponse): void {
  sendError(res, "unauthorized", "no or wrong bearer token", { "www-authenticate": "Bearer" });
}

/**
 * Refuse a request that came after the service began stopping, before any handler ran for it, and
 * close its connection: Brain sends calls on connections it keeps alive, and Node's server.close()
 * leaves those open.
 */
export async function refuseStopping(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // read the body to its end first: closing a socket with bytes unread resets it, and the caller
  // would see its connection lost instead of this answer
  req.resume();
  await finished(req);
  sendError(res, "service_stopping", "the tool service is stopping; this call was not started: call again", {
    connection: "close",
  });
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the body exceeds ${limit} bytes`);
  }
}

/** Read a whole body, never holding more than `maxBytes`: past that it throws BodyTooLarge. */
export async function readBounded(
  body: AsyncIterable<Buffer | Uint8Array>,
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    // stop here: past the limit nothing can be accepted, and buffering more is what an abuser wants
    if (size > maxBytes) throw new BodyTooLarge(maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; code: HttpErrorCode; message: string };

/** Read and parse a JSON request body: checks the content type and the size before parsing. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  if (type !== "application/json") {
    req.resume();
    return { ok: false, code: "unsupported_media_type", message: "send Content-Type: application/json" };
  }
  if (Number(req.headers["content-length"]) > maxBytes) {
    req.resume();
    return { ok: false, code: "payload_too_large", message: `the body exceeds ${maxBytes} bytes` };
  }
  let bytes: Buffer;
  try {
    bytes = await readBounded(req, maxBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLarge)) throw error;
    req.resume();
    return { ok: false, code: "payload_too_large", message: error.message };
  }
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) };
  } catch {
    return { ok: false, code: "invalid_request", message: "the body is not valid JSON" };
  }
}
