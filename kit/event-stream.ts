import type { ServerResponse } from "node:http";
import type { ResultObject } from "../protocol/result.js";

export interface EventStreamOptions {
  /** A `:` comment line this often keeps proxies and idle timers from closing a quiet stream. */
  keepAliveMs: number;
  /** Progress is dropped, not queued, while this much is waiting for a slow reader. */
  maxBufferedBytes: number;
}

/**
 * The event-stream answer to one call: headers at once, then progress events and keep-alive
 * comments, then exactly one result event, after which the response ends.
 */
export class EventStreamResponse {
  #keepAlive: NodeJS.Timeout | undefined;
  #dropped = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      // a buffering proxy would hold progress back until the result
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    this.#keepAlive = setInterval(() => this.#write(": keep-alive\n\n"), options.keepAliveMs);
    this.#keepAlive.unref();
  }

  /** Progress events dropped because the reader fell behind. */
  get dropped(): number {
    return this.#dropped;
  }

  /** `json` is one serialized JSON value: JSON.stringify never emits a raw line break. */
  progress(json: string): void {
    if (this.res.writableLength > this.options.maxBufferedBytes) {
      this.#dropped++;
      return;
    }
    this.#write(`event: progress\ndata: ${json}\n\n`);
  }

  result(result: ResultObject): void {
    this.#stopKeepAlive();
    if (!this.res.writable) return;
    this.res.end(`event: result\ndata: ${JSON.stringify(result)}\n\n`);
  }

  /** The caller went away or the service stops: no more writes. */
  abandon(): void {
    this.#stopKeepAlive();
  }

  #stopKeepAlive(): void {
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }

  #write(text: string): void {
    if (this.res.writable) this.res.write(text);
  }
}
