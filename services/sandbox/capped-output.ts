import { StringDecoder } from "node:string_decoder";

/**
 * One output stream of a run, kept up to `limit` bytes; the rest is counted and dropped, so a
 * program that writes gigabytes costs the service nothing but the reading.
 */
export class CappedOutput {
  readonly #chunks: Buffer[] = [];
  readonly #decoder = new StringDecoder("utf8");
  #kept = 0;
  #seen = 0;

  constructor(readonly limit: number) {}

  /** Take a chunk; returns the text of the part kept (decoded across chunk boundaries), "" when none was. */
  push(chunk: Buffer): string {
    this.#seen += chunk.length;
    const room = this.limit - this.#kept;
    if (room <= 0) return "";
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.length;
    return this.#decoder.write(kept);
  }

  get truncated(): boolean {
    return this.#seen > this.#kept;
  }

  /** What was kept, as UTF-8; invalid bytes (and a character cut at the limit) become U+FFFD. */
  text(): string {
    return Buffer.concat(this.#chunks, this.#kept).toString("utf8");
  }
}
