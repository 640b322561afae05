import type { EventStreamBody } from "./event-stream-body.js";

const held: HeldFrames[] = [];

/**
 * A stream's live frames, held until the event loop's next check phase and then written to its
 * response in one write. The release is scheduled once the code running now and the promise
 * callbacks it queued are done: a tool call's request, sent by them right after its events are
 * stored and published, is written at that check phase too (undici first reads a reused keep-alive
 * socket for anything the server sent while it was idle), and ahead of the release. So the events'
 * write leaves after the request, while the tool service works, rather than before it (BENCHMARKS.md,
 * "Live events written after the tool request"). One write of the pass's frames, rather than one
 * each into a corked response, makes one chunk of the body instead of one a frame (BENCHMARKS.md,
 * "A stream's live frames written as one").
 */
export class HeldFrames {
  #frames = "";

  /** `onWritten` gets the bytes of each write. */
  constructor(
    private readonly body: EventStreamBody,
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
    const { res } = this.body;
    if (!res.destroyed && !res.writableEnded) writeFrames(this.body, frames, this.onWritten);
  }
}

/**
 * Write event frames to a client, as one chunk of its body, and tell `onWritten` how many UTF-8
 * bytes they are: measured once, for the chunk's size and the count alike (BENCHMARKS.md).
 */
export function writeFrames(
  body: EventStreamBody,
  frames: string,
  onWritten: ((bytes: number) => void) | undefined,
): void {
  const bytes = body.write(frames);
  onWritten?.(bytes);
}

const scheduleRelease = () => setImmediate(release);

function release(): void {
  for (const frames of held.splice(0)) frames.flush();
}
