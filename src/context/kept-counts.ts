/**
 * Token counts of long texts, kept by their content: every request of a session carries the same
 * system prompt and tool schemas, and a turn counted them again at its start (35 µs for a 20 KB
 * prompt estimated, 309 µs with OpenAI's tokenizer; BENCHMARKS.md). The least recently used go
 * first, past `entries` texts or `chars` characters in all.
 */
export class KeptCounts {
  readonly #counts = new Map<string, number>();
  #chars = 0;

  constructor(
    private readonly entries: number,
    private readonly chars: number,
  ) {}

  count(text: string, counter: (text: string) => number): number {
    const kept = this.#counts.get(text);
    if (kept !== undefined) {
      // the most recently used go last
      this.#counts.delete(text);
      this.#counts.set(text, kept);
      return kept;
    }
    const tokens = counter(text);
    // one text over the bound alone is not kept, rather than pushing out all others
    if (text.length > this.chars) return tokens;
    this.#counts.set(text, tokens);
    this.#chars += text.length;
    for (const [oldest] of this.#counts) {
      if (this.#counts.size <= this.entries && this.#chars <= this.chars) break;
      this.#counts.delete(oldest);
      this.#chars -= oldest.length;
    }
    return tokens;
  }

  get size(): number {
    return this.#counts.size;
  }
}
