import { request } from "undici";
import { SseLimitError, SseParser } from "../../protocol/sse.js";
import { mediaTypeOf } from "../media-type.js";

/** What the checker saw of one request: pure data, judged by the rules. */
export interface Exchange {
  /** Set when no response came: the connection failed, or no headers in time. */
  failure?: string;
  status?: number;
  headersMs?: number;
  location?: string;
  contentType?: string;
  /** A JSON body as received (up to the size cap). */
  json?: { text: string; bytes: number };
  stream?: StreamSeen;
  /** The body ended early: a cap was passed, or the call ran out of time. */
  cut?: string;
}

export interface StreamSeen {
  events: { event: string; data: string }[];
  comments: number;
  /** Whether the response ended within the grace after its first result. */
  endedAfterResult: boolean;
}

export interface ExchangeOptions {
  headers: Record<string, string>;
  body: string;
  headersTimeoutMs: number;
  callTimeoutMs: number;
  maxOutputBytes: number;
  maxProgressBytes: number;
  /** How long to keep reading after the first result, to see whether anything else follows. */
  afterResultMs: number;
}

/** POST once, never following a redirect, and record everything the rules look at, bounded. */
export async function exchange(url: string, options: ExchangeOptions): Promise<Exchange> {
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.callTimeoutMs);
  try {
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, {
        method: "POST",
        headers: options.headers,
        body: options.body,
        signal: controller.signal,
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: 0,
      });
    } catch (error) {
      return { failure: describeFailure(error, options) };
    }
    const seen: Exchange = {
      status: response.statusCode,
      headersMs: Math.round(performance.now() - started),
      contentType: String(response.headers["content-type"] ?? ""),
    };
    if (typeof response.headers.location === "string") seen.location = response.headers.location;
    const type = mediaTypeOf(seen.contentType).toLowerCase();
    try {
      if (response.statusCode === 200 && type === "text/event-stream") {
        seen.stream = { events: [], comments: 0, endedAfterResult: false };
        await readStream(response.body, seen, seen.stream, options);
      } else {
        const text = await readUpTo(response.body, options.maxOutputBytes, seen);
        seen.json = { text: text.toString("utf8"), bytes: text.length };
      }
    } catch (error) {
      seen.cut = controller.signal.aborted
        ? `the call did not finish within ${options.callTimeoutMs / 1000} s`
        : `the body broke off: ${(error as Error).message}`;
    } finally {
      response.body.destroy();
    }
    return seen;
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(error: unknown, options: ExchangeOptions): string {
  const code = (error as { code?: string }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT") {
    return `no response headers within ${options.headersTimeoutMs / 1000} s (Brain's tool_headers_timeout_seconds); send headers at once and stream progress`;
  }
  if (code === "UND_ERR_ABORTED") return `no answer within ${options.callTimeoutMs / 1000} s`;
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return `the request failed: ${cause ?? code ?? (error as Error).message}`;
}

async function readUpTo(body: AsyncIterable<Buffer>, max: number, seen: Exchange): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      seen.cut = `the body exceeds ${max} bytes (max_output_bytes)`;
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readStream(
  body: AsyncIterable<Buffer> & { destroy(): void },
  seen: Exchange,
  stream: StreamSeen,
  options: ExchangeOptions,
): Promise<void> {
  const parser = new SseParser((event) =>
    event === "progress" ? options.maxProgressBytes : options.maxOutputBytes,
  );
  let graceTimer: NodeJS.Timeout | undefined;
  let graceExpired = false;
  const countComments = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split(/\r\n|\r|\n/))
      if (line.startsWith(":")) stream.comments++;
  };
  try {
    for await (const chunk of body) {
      countComments(chunk);
      for (const event of parser.push(chunk)) {
        stream.events.push({ event: event.event, data: event.data });
        if (event.event === "result" && graceTimer === undefined) {
          // Brain stops reading at the result; the checker looks a little further for a second one
          graceTimer = setTimeout(() => {
            graceExpired = true;
            body.destroy();
          }, options.afterResultMs);
        }
      }
    }
    stream.endedAfterResult = stream.events.some((event) => event.event === "result");
  } catch (error) {
    if (error instanceof SseLimitError) {
      seen.cut =
        error.event === "progress"
          ? `a progress event exceeds ${error.limit} bytes (Brain's max_progress_bytes)`
          : `the "${error.event}" event exceeds ${error.limit} bytes (max_output_bytes)`;
      return;
    }
    // destroyed by the grace timer: the stream stayed open after its result
    if (graceExpired) return;
    throw error;
  } finally {
    clearTimeout(graceTimer);
  }
}
