export type StreamName = "stdout" | "stderr";

export interface OutputProgress {
  stream: StreamName;
  text: string;
}

/**
 * Joins output into progress events: one per stream every `intervalMs`, or sooner when `maxChars`
 * pile up, so a chatty program sends a few events a second instead of one per write, and no event
 * outgrows the progress cap (a char is at most 6 bytes once JSON-escaped).
 */
export class ProgressBatcher {
  #pending: OutputProgress | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (progress: OutputProgress) => void,
    private readonly intervalMs: number,
    /** At least 2, so a surrogate pair always fits. */
    private readonly maxChars: number,
  ) {}

  push(stream: StreamName, text: string): void {
    if (text === "") return;
    if (this.#pending && this.#pending.stream !== stream) this.flush();
    let rest = text;
    while (rest.length > 0) {
      this.#pending ??= { stream, text: "" };
      const pending = this.#pending;
      let room = this.maxChars - pending.text.length;
      // never split a surrogate pair between two events
      if (room < rest.length && /[\uD800-\uDBFF]/.test(rest.charAt(room - 1))) room -= 1;
      if (room === 0) {
        this.flush();
        continue;
      }
      pending.text += rest.slice(0, room);
      rest = rest.slice(room);
      if (pending.text.length >= this.maxChars) this.flush();
    }
    if (this.#pending && !this.#timer) this.#timer = setTimeout(() => this.flush(), this.intervalMs);
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending) this.emit(pending);
  }
}
