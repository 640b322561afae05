/**
 * A server-sent events parser over bytes with a bound on everything it holds: a line, and the data
 * of one event, can never grow past `maxEventBytes(eventName)`. Field handling follows the WHATWG
 * event-stream rules (CR, LF or CRLF line ends; `:` comments; one optional space after the colon;
 * data lines joined by LF; a blank line dispatches). Browser-safe: Uint8Array and TextDecoder only.
 */
export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseLimitError extends Error {
  constructor(
    readonly event: string,
    readonly limit: number,
  ) {
    super(`an event-stream event ("${event}") exceeded ${limit} bytes`);
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** Room for the field name and separator on top of the data a line may carry. */
const FIELD_OVERHEAD = 64;
const EMPTY = new Uint8Array(0);

export class SseParser {
  readonly #decoder = new TextDecoder();
  #line: Uint8Array[] = [];
  #lineBytes = 0;
  #skipLeadingLF = false;
  #event: string | undefined;
  #data: string[] = [];
  #dataBytes = 0;
  #id: string | undefined;
  #retryMs: number | undefined;

  /** `maxEventBytes(name)` bounds one event's data; `name` is undefined until its `event:` line. */
  constructor(private readonly maxEventBytes: (event: string | undefined) => number) {}

  /** The reconnection time the stream asked for (its last `retry:` field), in ms. */
  get retryMs(): number | undefined {
    return this.#retryMs;
  }

  /** Feed bytes; returns the events completed by them. Throws SseLimitError past a bound. */
  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#skipLeadingLF && chunk.length > 0) {
      this.#skipLeadingLF = false;
      if (chunk[0] === LF) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte !== LF && byte !== CR) continue;
      this.#appendLine(chunk.subarray(start, i));
      const event = this.#field(this.#takeLine());
      if (event) events.push(event);
      if (byte === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else {
          this.#skipLeadingLF = true;
        }
      }
      start = i + 1;
    }
    if (start < chunk.length) this.#appendLine(chunk.subarray(start));
    return events;
  }

  #appendLine(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#lineBytes += bytes.length;
    const limit = this.maxEventBytes(this.#event) + FIELD_OVERHEAD - this.#dataBytes;
    if (this.#lineBytes > limit)
      throw new SseLimitError(this.#event ?? "message", this.maxEventBytes(this.#event));
    // a view, not a copy: the chunks of undici bodies and fetch streams are never reused
    this.#line.push(bytes);
  }

  /** The line's bytes, joined only when it came in more than one chunk. */
  #takeLine(): Uint8Array {
    const parts = this.#line;
    this.#line = [];
    const total = this.#lineBytes;
    this.#lineBytes = 0;
    if (parts.length === 0) return EMPTY;
    if (parts.length === 1) return parts[0] as Uint8Array;
    const line = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      line.set(part, at);
      at += part.length;
    }
    return line;
  }

  #field(line: Uint8Array): SseEvent | undefined {
    if (line.length === 0) return this.#dispatch();
    if (line[0] === COLON) return undefined;
    const colon = line.indexOf(COLON);
    const nameEnd = colon === -1 ? line.length : colon;
    let valueStart = colon === -1 ? line.length : colon + 1;
    if (line[valueStart] === SPACE) valueStart++;
    const name = this.#decoder.decode(line.subarray(0, nameEnd));
    const valueBytes = line.length - valueStart;
    const value = () => this.#decoder.decode(line.subarray(valueStart));
    switch (name) {
      case "event": {
        const event = value();
        this.#event = event;
        // data may come before the event line; what it holds so far must fit this event's bound
        const limit = this.maxEventBytes(event);
        if (this.#dataBytes > limit) throw new SseLimitError(event, limit);
        break;
      }
      case "data": {
        this.#dataBytes += valueBytes + (this.#data.length > 0 ? 1 : 0);
        const limit = this.maxEventBytes(this.#event);
        if (this.#dataBytes > limit) throw new SseLimitError(this.#event ?? "message", limit);
        this.#data.push(value());
        break;
      }
      case "id": {
        const id = value();
        if (!id.includes("\0")) this.#id = id;
        break;
      }
      case "retry": {
        const retry = value();
        if (/^\d+$/.test(retry)) this.#retryMs = Number(retry);
        break;
      }
      default:
      // unknown fields are ignored, as the event-stream rules say
    }
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const event = this.#event ?? "message";
    const hadData = this.#data.length > 0;
    const data = this.#data.join("\n");
    this.#event = undefined;
    this.#data = [];
    this.#dataBytes = 0;
    return hadData ? { event, data, id: this.#id } : undefined;
  }
}
