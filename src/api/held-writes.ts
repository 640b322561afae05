import type { ServerResponse } from "node:http";

const held: HeldFrames[] = [];

/**
 * A stream's live frames, held until the event loop's next check phase and then written to its
 * response in one write. The release is scheduled once the code running now and the promise
 * callbacks it queued are done: a tool call's request, sent by them right after its events are
 * stored and published, is written at that check phase too (undici first reads a reused keep-alive
 * socket for anything the server sent while it was idle), and ahead of the release. So the events'
 * write leaves after the request, while the tool service works, rather than before it (BENCHMARKS.md,
 * "Live events written after the tool request"). One write of the pass's frames, rather than one
 * each into a corked response, gives Node's chunked encoding one chunk to frame instead of one a
 * frame (BENCHMARKS.md, "A stream's live frames written as one").
 */
export class HeldFrames {
  #frames = "";

  /** `onWritten` gets the bytes of each write. */
  constructor(
    private readonly res: ServerResponse,
    private readonly onWritten?: (bytes: number) => void,
  ) {}

  /** Characters held, not yet given to the response. */
  get length(): number {
    return this.#frames.length;
  }

  add(frame: string): void {
    if (this.#frames === "") {
      held.push(this);
      if (held.length === 1) process.nextTick(scheduleRelease);
    }
    this.#frames += frame;
  }

  /** Write what is held now: before the response ends, so that its last frames go with the end. */
  flush(): void {
    if (this.#frames === "") return;
    const frames = this.#frames;
    this.#frames = "";
    // a client that left, or was dropped, gets nothing more; it resumes with Last-Event-ID
    if (!this.res.destroyed && !this.res.writableEnded) writeFrames(this.res, frames, this.onWritten);
  }
}

/**
 * Write event frames to a client as their UTF-8 bytes, made once, and tell `onWritten` how many:
 * the count is theirs, Node's chunked encoding takes their length for the chunk's size, and the
 * socket sends them as they are. Written as a string, the frames were measured by
 * `Buffer.byteLength` for the count and again for the chunk's size, then encoded at the socket
 * (BENCHMARKS.md).
 */
export function writeFrames(
  res: ServerResponse,
  frames: string,
  onWritten: ((bytes: number) => void) | undefined,
): void {
  const bytes = Buffer.from(frames, "utf8");
  res.write(bytes);
  onWritten?.(bytes.length);
}

const scheduleRelease = () => setImmediate(release);

function release(): void {
  for (const frames of held.splice(0)) frames.flush();
}
