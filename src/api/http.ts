import type { IncomingMessage, ServerResponse } from "node:http";
import { unstorable } from "../../protocol/storable-json.js";
import type { Validator } from "../../protocol/validation.js";
import { check } from "../../protocol/validation.js";
import { mediaTypeOf } from "../media-type.js";
import { readWhole, TOO_LARGE } from "../read-whole.js";
import { ApiError } from "./errors.js";

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}

export function sendError(res: ServerResponse, error: ApiError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  // the rest of a refused body is never read, so the connection cannot carry another request
  if (error.code === "payload_too_large") res.setHeader("connection", "close");
  sendJson(res, error.status, error);
}

/**
 * Read and validate a JSON request body, bounded by `maxBytes`: a body over the cap is refused
 * with 413 without being buffered, and nothing is acted on until the whole body is valid.
 */
export async function readJsonBody<T>(
  req: IncomingMessage,
  maxBytes: number,
  validate: Validator<T>,
  emptyValue?: T,
): Promise<T | ApiError> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return new ApiError("payload_too_large", `the request body is over ${maxBytes} bytes`);
  }
  const body = await readWhole(req, maxBytes);
  if (body === TOO_LARGE) {
    // the rest is read and dropped, and the connection closes after the answer (sendError), so
    // the client reads its 413 rather than a reset
    req.resume();
    return new ApiError("payload_too_large", `the request body is over ${maxBytes} bytes`);
  }
  if (body.length === 0 && emptyValue !== undefined) return emptyValue;
  const contentType = mediaTypeOf(req.headers["content-type"]).toLowerCase();
  if (contentType !== "application/json") {
    return new ApiError(
      "unsupported_media_type",
      "the request body must be JSON with Content-Type: application/json",
    );
  }
  // Brain reads bodies as sent: a compressed one would be taken for bytes of JSON
  const encoding = req.headers["content-encoding"]?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
    return new ApiError(
      "unsupported_media_type",
      `the request body must not be encoded (Content-Encoding: ${JSON.stringify(encoding.slice(0, 64))})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (error) {
    return new ApiError("invalid_request", `the request body is not valid JSON: ${(error as Error).message}`);
  }
  const problem = unstorable(value);
  if (problem) return new ApiError("invalid_request", `the request body ${problem}`);
  const checked = check(validate, value);
  if (!checked.ok) return new ApiError("invalid_request", checked.problems.join("; "));
  return checked.value;
}
