/**
 * A server-sent events parser over bytes with a bound on everything it holds: a line, and the
 * data of one event, can never grow past `maxEventBytes(eventName)`. Field handling follows the
 * WHATWG event-stream rules (CR, LF or CRLF line ends; `:` comments; one optional space after
 * the colon; data lines joined by LF; a blank line dispatches).
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
/** Room for the field name and separator on top of the data a line may carry. */
const FIELD_OVERHEAD = 64;

export class SseParser {
  #line: Buffer[] = [];
  #lineBytes = 0;
  #skipLeadingLF = false;
  #event: string | undefined;
  #data: string[] = [];
  #dataBytes = 0;
  #id: string | undefined;

  /** `maxEventBytes(name)` bounds one event's data; `name` is undefined until its `event:` line. */
  constructor(private readonly maxEventBytes: (event: string | undefined) => number) {}

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
      const line = this.#takeLine();
      const event = this.#field(line);
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
    this.#line.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  #takeLine(): string {
    const line = this.#line.length === 1 ? (this.#line[0] as Buffer) : Buffer.concat(this.#line);
    this.#line = [];
    this.#lineBytes = 0;
    return line.toString("utf8");
  }

  #field(line: string): SseEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.charCodeAt(0) === 0x3a) return undefined;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (name) {
      case "event": {
        this.#event = value;
        // data may come before the event line; what it holds so far must fit this event's bound
        const limit = this.maxEventBytes(value);
        if (this.#dataBytes > limit) throw new SseLimitError(value, limit);
        break;
      }
      case "data": {
        this.#dataBytes += Buffer.byteLength(value) + (this.#data.length > 0 ? 1 : 0);
        const limit = this.maxEventBytes(this.#event);
        if (this.#dataBytes > limit) throw new SseLimitError(this.#event ?? "message", limit);
        this.#data.push(value);
        break;
      }
      case "id":
        if (!value.includes("\0")) this.#id = value;
        break;
      default:
      // "retry" and unknown fields are ignored, as the event-stream rules say
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
