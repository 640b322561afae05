import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** The chunk of size zero that ends a chunked body, with no trailers. */
const LAST_CHUNK = "0\r\n\r\n";
const CR = 0x0d;
const LF = 0x0a;
/** A chunk's size is written in lower-case hex, as Node writes it. */
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/**
 * An event stream's body, written a chunk a write, each chunk framed here and handed to Node as one
 * buffer: its size line, its text's UTF-8 bytes and the CRLF after them. Node's own chunked encoding
 * sends a write as four pieces (the size as a latin1 string, CRLF, the bytes, CRLF) that the socket
 * gathers with `writev`, 7.9 k instructions a write in C++ alone against 0.6 k for one buffer
 * (BENCHMARKS.md); the bytes on the wire are the same. An HTTP/1.0 client gets the body unframed, as
 * Node sends it one, ended by the connection's close.
 */
export class EventStreamBody {
  readonly #chunked: boolean;

  constructor(
    readonly res: ServerResponse,
    req: IncomingMessage,
  ) {
    this.#chunked = !(req.httpVersionMajor === 1 && req.httpVersionMinor === 0);
  }

  /** Send the head: 200 and `headers`, and `Transfer-Encoding: chunked` when the chunks are framed here. */
  open(headers: OutgoingHttpHeaders): void {
    if (!this.#chunked) {
      this.res.writeHead(200, headers);
      return;
    }
    this.res.writeHead(200, { ...headers, "transfer-encoding": "chunked" });
    // the head says chunked, which turns Node's framing on: the chunks are framed here instead
    this.res.chunkedEncoding = false;
  }

  /** Write `text` as one chunk; the UTF-8 bytes of `text` written. */
  write(text: string): number {
    // encoded before it is measured: Node writes a short string into its pool without measuring it,
    // where `Buffer.byteLength` of a string made of pieces (a pass's frames) takes V8's slow path,
    // 4.7 k instructions (BENCHMARKS.md)
    const bytes = Buffer.from(text, "utf8");
    const size = bytes.length;
    // a chunk of size zero would end the body
    if (size === 0) return 0;
    if (!this.#chunked) {
      this.res.write(bytes);
      return size;
    }
    let digits = 1;
    for (let rest = size >>> 4; rest > 0; rest >>>= 4) digits++;
    const chunk = Buffer.allocUnsafe(digits + size + 4);
    for (let at = digits - 1, rest = size; at >= 0; at--, rest >>>= 4)
      chunk[at] = HEX_DIGITS[rest & 15] as number;
    chunk[digits] = CR;
    chunk[digits + 1] = LF;
    bytes.copy(chunk, digits + 2);
    chunk[digits + 2 + size] = CR;
    chunk[digits + 3 + size] = LF;
    this.res.write(chunk);
    return size;
  }

  /** End the body: its last chunk, then the response. */
  end(): void {
    if (this.res.writableEnded) return;
    if (this.#chunked && !this.res.destroyed) this.res.end(LAST_CHUNK, "latin1");
    else this.res.end();
  }
}
