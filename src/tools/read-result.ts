import { checkResultObject, type ToolResult } from "../../protocol/result.js";
import { SseLimitError, SseParser } from "../../protocol/sse.js";
import { unstorable } from "../../protocol/storable-json.js";
import type { ToolBinding } from "../config/load.js";
import { mediaTypeOf } from "../media-type.js";
import { ToolFailure } from "./outcome.js";
import { redactedStart } from "./redact.js";

/** How a call ended: the service's result, or the failure Brain records for it. */
export type CallOutcome = ToolResult | ToolFailure;

/** What Brain reads of a response's head: its status, and the headers that bear on the result. */
export interface ResponseHead {
  statusCode: number;
  /** As sent; a repeated header's values joined by commas. */
  contentType: string | undefined;
  /** Only when the response sent exactly one. */
  contentLength: string | undefined;
  location: string | undefined;
}

export interface ReadLimits {
  maxProgressBytes: number;
  /** What the request carried that the service must not get to show: cut out of error snippets. */
  secrets: readonly string[];
}

/**
 * A response's body, read as it arrives. Each chunk may decide the call's outcome, and then
 * nothing more of the body is read; until then `data` gives undefined.
 */
export interface ResponseBody {
  data(chunk: Buffer): CallOutcome | undefined;
  /** The body ended. */
  end(): CallOutcome;
  /**
   * The body broke off, or took longer than `deadlineMs`: the outcome where the head decided it
   * already, undefined where the break decides it.
   */
  broken(): CallOutcome | undefined;
  /** How long the body may take, where it has a limit of its own. */
  readonly deadlineMs: number | undefined;
}

/**
 * What to do with a tool's response (docs/protocol.md): judge the status and content type, then
 * read the body bounded, or not at all. Pure: the caller feeds it what the connection brings.
 */
export function readToolResponse(
  head: ResponseHead,
  binding: ToolBinding,
  limits: ReadLimits,
  onProgress: (data: unknown) => void,
): ToolFailure | ResponseBody {
  if (head.statusCode !== 200) return new ErrorStatusBody(head, limits.secrets);
  // quoted as sent in the failure below, not lowercased: a secret echoed in it must still be found
  const contentType = mediaTypeOf(head.contentType);
  const mediaType = contentType.toLowerCase();
  if (mediaType === "application/json") {
    const limit = binding.maxOutputBytes;
    return Number(head.contentLength) > limit ? tooLarge(limit) : new JsonBody(binding);
  }
  if (mediaType === "text/event-stream") return new EventStreamBody(binding, limits, onProgress);
  return new ToolFailure(
    "invalid_result",
    `the tool service answered with content type "${quoted(contentType, limits.secrets)}"; expected application/json or text/event-stream`,
  );
}

/** A JSON result: the whole body, up to max_output_bytes. */
class JsonBody implements ResponseBody {
  readonly deadlineMs = undefined;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(private readonly binding: ToolBinding) {}

  data(chunk: Buffer): CallOutcome | undefined {
    this.#size += chunk.length;
    // past the limit nothing can be valid, and buffering more is what a hostile service wants
    if (this.#size > this.binding.maxOutputBytes) return tooLarge(this.binding.maxOutputBytes);
    this.#chunks.push(chunk);
    return undefined;
  }

  end(): CallOutcome {
    const chunks = this.#chunks;
    const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size);
    return parseResult(whole, this.binding, "the JSON body");
  }

  broken(): undefined {
    return undefined;
  }
}

/** An event stream: progress events, each passed on, until the result event. */
class EventStreamBody implements ResponseBody {
  readonly deadlineMs = undefined;
  readonly #parser: SseParser;

  constructor(
    private readonly binding: ToolBinding,
    private readonly limits: ReadLimits,
    private readonly onProgress: (data: unknown) => void,
  ) {
    this.#parser = new SseParser((event) =>
      event === "progress" ? limits.maxProgressBytes : binding.maxOutputBytes,
    );
  }

  data(chunk: Buffer): CallOutcome | undefined {
    let events: ReturnType<SseParser["push"]>;
    try {
      events = this.#parser.push(chunk);
    } catch (error) {
      if (!(error instanceof SseLimitError)) throw error;
      return error.event === "progress"
        ? new ToolFailure(
            "output_too_large",
            `a progress event exceeded the ${error.limit}-byte cap on progress payloads`,
          )
        : tooLarge(error.limit);
    }
    for (const event of events) {
      // the result ends the call: whatever the service sends after it is not read
      if (event.event === "result") return parseResult(event.data, this.binding, "the result event");
      if (event.event !== "progress") {
        return new ToolFailure(
          "invalid_result",
          `the event stream has an unknown event "${quoted(event.event, this.limits.secrets)}"`,
        );
      }
      let progress: unknown;
      try {
        progress = JSON.parse(event.data);
      } catch {
        return new ToolFailure("invalid_result", "a progress event's data is not valid JSON");
      }
      const problem = unstorable(progress);
      if (problem) return new ToolFailure("invalid_result", `a progress event's data ${problem}`);
      this.onProgress(progress);
    }
    return undefined;
  }

  end(): CallOutcome {
    return new ToolFailure("invalid_result", "the event stream ended without a result event");
  }

  broken(): undefined {
    return undefined;
  }
}

/** How long the start of an error body may take: the status has decided the outcome already. */
const SNIPPET_WAIT_MS = 1000;
/** How much of an error body the model is shown, in characters. */
const SNIPPET_CHARS = 512;

/**
 * A status other than 200, which decides the outcome: the start of the body is read for the model
 * to see, and the rest never is. A broken or trickling body changes nothing.
 */
class ErrorStatusBody implements ResponseBody {
  readonly deadlineMs = SNIPPET_WAIT_MS;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  /** Redaction comes before the cut, so this reads as far past the snippet as the longest secret. */
  readonly #wanted: number;

  constructor(
    private readonly head: ResponseHead,
    private readonly secrets: readonly string[],
  ) {
    this.#wanted = SNIPPET_CHARS * 4 + Math.max(0, ...secrets.map((secret) => Buffer.byteLength(secret)));
  }

  data(chunk: Buffer): CallOutcome | undefined {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return this.#size >= this.#wanted ? this.#outcome(false) : undefined;
  }

  end(): CallOutcome {
    return this.#outcome(this.#size < this.#wanted);
  }

  broken(): CallOutcome {
    return this.#outcome(false);
  }

  #outcome(complete: boolean): ToolFailure {
    const { statusCode, location } = this.head;
    if (statusCode >= 300 && statusCode < 400) {
      const to = location !== undefined ? ` to ${location}` : "";
      return new ToolFailure(
        "redirect",
        `the tool service answered ${statusCode} (a redirect${to}), which Brain does not follow`,
      );
    }
    // 4xx and 5xx only: a status past 599 is no HTTP status, and says nothing of the call
    if (statusCode >= 400 && statusCode < 600) {
      const text = Buffer.concat(this.#chunks, this.#size).subarray(0, this.#wanted).toString("utf8");
      const snippet = redactedStart(text, SNIPPET_CHARS, this.secrets, complete)
        .replace(/\p{Cc}+/gu, " ")
        .trim();
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
}

function parseResult(text: Buffer | string, binding: ToolBinding, what: string): CallOutcome {
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

function tooLarge(limit: number): ToolFailure {
  return new ToolFailure("output_too_large", `the result exceeded max_output_bytes (${limit} bytes)`);
}

/**
 * A name the service sent, for a message: its first 64 characters, with the secrets replaced
 * before the cut, so that no piece of one is left where the name is cut.
 */
function quoted(name: string, secrets: readonly string[]): string {
  return redactedStart(name, 64, secrets, true);
}
