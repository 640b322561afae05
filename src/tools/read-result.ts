import type { Dispatcher } from "undici";
import { checkResultObject, type ToolResult } from "../../protocol/result.js";
import { SseLimitError, SseParser } from "../../protocol/sse.js";
import { unstorable } from "../../protocol/storable-json.js";
import type { ToolBinding } from "../config/load.js";
import { readWhole, TOO_LARGE } from "../read-whole.js";
import { ToolFailure } from "./outcome.js";
import { redactedStart } from "./redact.js";

type ResponseData = Dispatcher.ResponseData;

export interface ReadLimits {
  maxProgressBytes: number;
  /** What the request carried that the service must not get to show: cut out of error snippets. */
  secrets: readonly string[];
}

/** How many bytes of a response's body Brain has read so far, for the call's span. */
export interface BodyRead {
  bytes: number;
}

/**
 * What to do with a tool's response: judge the status and content type, then read the body
 * bounded. `read`, where given, counts the bytes read: Brain stops reading at its limits, and
 * at the result event.
 */
export async function readToolResponse(
  response: ResponseData,
  binding: ToolBinding,
  limits: ReadLimits,
  onProgress: (data: unknown) => void,
  read?: BodyRead,
): Promise<ToolResult | ToolFailure> {
  const { statusCode, headers, body } = response;
  if (statusCode !== 200) {
    const snippet = await readSnippet(body, 512, limits.secrets, read);
    if (statusCode >= 300 && statusCode < 400) {
      const location = typeof headers.location === "string" ? ` to ${headers.location}` : "";
      return new ToolFailure(
        "redirect",
        `the tool service answered ${statusCode} (a redirect${location}), which Brain does not follow`,
      );
    }
    // 4xx and 5xx only: a status past 599 is no HTTP status, and says nothing of the call
    if (statusCode >= 400 && statusCode < 600) {
      return new ToolFailure(
        "http_status",
        `the tool service answered ${statusCode}${snippet ? `: ${snippet}` : ""}`,
        statusCode,
      );
    }
    return new ToolFailure(
      "invalid_result",
      `the tool service answered ${statusCode}; a result needs status 200`,
    );
  }
  const contentType = String(headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim();
  const mediaType = contentType?.toLowerCase();
  if (mediaType === "application/json") return readJsonResult(body, headers, binding, read);
  if (mediaType === "text/event-stream") return readSseResult(body, binding, limits, onProgress, read);
  discard(body);
  // quoted as sent, not lowercased: a secret echoed in it must still be found to be replaced
  return new ToolFailure(
    "invalid_result",
    `the tool service answered with content type "${quoted(contentType ?? "", limits.secrets)}"; expected application/json or text/event-stream`,
  );
}

async function readJsonResult(
  body: ResponseData["body"],
  headers: ResponseData["headers"],
  binding: ToolBinding,
  read: BodyRead | undefined,
): Promise<ToolResult | ToolFailure> {
  const limit = binding.maxOutputBytes;
  const declared = Number(headers["content-length"]);
  if (declared > limit) {
    discard(body);
    return tooLarge(limit);
  }
  const whole = await readWhole(body, limit, read && ((size) => (read.bytes = size)));
  if (whole !== TOO_LARGE) return parseResult(whole, binding, "the JSON body");
  discard(body);
  return tooLarge(limit);
}

async function readSseResult(
  body: ResponseData["body"],
  binding: ToolBinding,
  limits: ReadLimits,
  onProgress: (data: unknown) => void,
  read: BodyRead | undefined,
): Promise<ToolResult | ToolFailure> {
  const parser = new SseParser((event) =>
    event === "progress" ? limits.maxProgressBytes : binding.maxOutputBytes,
  );
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (read) read.bytes += chunk.length;
      for (const event of parser.push(chunk)) {
        if (event.event === "result") {
          // the result ends the call: whatever the service sends after it is not read
          discard(body);
          return parseResult(event.data, binding, "the result event");
        }
        if (event.event !== "progress") {
          discard(body);
          return new ToolFailure(
            "invalid_result",
            `the event stream has an unknown event "${quoted(event.event, limits.secrets)}"`,
          );
        }
        let progress: unknown;
        try {
          progress = JSON.parse(event.data);
        } catch {
          discard(body);
          return new ToolFailure("invalid_result", "a progress event's data is not valid JSON");
        }
        const problem = unstorable(progress);
        if (problem) {
          discard(body);
          return new ToolFailure("invalid_result", `a progress event's data ${problem}`);
        }
        onProgress(progress);
      }
    }
  } catch (error) {
    if (!(error instanceof SseLimitError)) throw error;
    discard(body);
    return error.event === "progress"
      ? new ToolFailure(
          "output_too_large",
          `a progress event exceeded the ${error.limit}-byte cap on progress payloads`,
        )
      : tooLarge(error.limit);
  }
  return new ToolFailure("invalid_result", "the event stream ended without a result event");
}

function parseResult(text: Buffer | string, binding: ToolBinding, what: string): ToolResult | ToolFailure {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof text === "string" ? text : text.toString("utf8"));
  } catch {
    return new ToolFailure("invalid_result", `${what} is not valid JSON`);
  }
  const problem = unstorable(raw);
  if (problem) return new ToolFailure("invalid_result", `${what} ${problem}`);
  const checked = checkResultObject(raw, binding.validateOutput);
  return "problem" in checked ? new ToolFailure("invalid_result", checked.problem) : checked;
}

/**
 * Stop reading a body Brain will not use. undici reports a body destroyed before its end as an
 * 'error' event; with no listener that is an uncaught exception, so a tool service answering with
 * the wrong content type could take Brain down.
 */
function discard(body: ResponseData["body"]): void {
  body.on("error", () => undefined);
  body.destroy();
}

function tooLarge(limit: number): ToolFailure {
  return new ToolFailure("output_too_large", `the result exceeded max_output_bytes (${limit} bytes)`);
}

/** How long the start of an error body may take: the status has decided the outcome already. */
const SNIPPET_WAIT_MS = 1000;

/**
 * The start of an error body, at most `max` characters, for the model to read; the rest is never
 * read. It is redacted before it is cut, so it reads as far past `max` as the longest secret.
 */
async function readSnippet(
  body: ResponseData["body"],
  max: number,
  secrets: readonly string[],
  read: BodyRead | undefined,
): Promise<string> {
  const wanted = max * 4 + Math.max(0, ...secrets.map((secret) => Buffer.byteLength(secret)));
  const chunks: Buffer[] = [];
  let size = 0;
  let complete = false;
  // a service trickling its error body would otherwise hold the call until timeout_seconds
  const deadline = setTimeout(() => discard(body), SNIPPET_WAIT_MS);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (read) read.bytes = size;
      if (size >= wanted) break;
    }
    complete = size < wanted;
  } catch {
    // the status already decides the outcome; a broken error body changes nothing
  } finally {
    clearTimeout(deadline);
    discard(body);
  }
  const text = Buffer.concat(chunks).subarray(0, wanted).toString("utf8");
  return redactedStart(text, max, secrets, complete)
    .replace(/\p{Cc}+/gu, " ")
    .trim();
}

/**
 * A name the service sent, for a message: its first 64 characters, with the secrets replaced
 * before the cut, so that no piece of one is left where the name is cut.
 */
function quoted(name: string, secrets: readonly string[]): string {
  return redactedStart(name, 64, secrets, true);
}
