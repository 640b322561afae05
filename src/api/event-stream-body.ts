import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** The chunk of size zero that ends a chunked body, with no trailers. */
const LAST_CHUNK = "0\r\n\r\n";
const CR = 0x0d;
const LF = 0x0a;

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
    const size = Buffer.byteLength(text, "utf8");
    // a chunk of size zero would end the body
    if (size === 0) return 0;
    if (!this.#chunked) {
      this.res.write(text, "utf8");
      return size;
    }
    const sizeLine = size.toString(16);
    const chunk = Buffer.allocUnsafe(sizeLine.length + size + 4);
    let at = chunk.write(sizeLine, 0, "latin1");
    chunk[at++] = CR;
    chunk[at++] = LF;
    at += chunk.write(text, at, size, "utf8");
    chunk[at++] = CR;
    chunk[at] = LF;
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
