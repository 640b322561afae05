import type { ServerResponse } from "node:http";

const held: ServerResponse[] = [];

/**
 * Holds what is written to `res` until the event loop's next check phase, then lets every held
 * response write at once. The release is scheduled once the code running now and the promise
 * callbacks it queued are done: a tool call's request, sent by them right after its events are
 * stored and published, is written at that check phase too (undici first reads a reused keep-alive
 * socket for anything the server sent while it was idle), and ahead of the release. So the events'
 * write leaves after the request, while the tool service works, rather than before it; and each
 * stream's events of one pass of the loop leave in one write (BENCHMARKS.md, "Live events written
 * after the tool request"). A response already corked, by Node or by an earlier hold, is left as
 * it is.
 */
export function holdWrites(res: ServerResponse): void {
  if (res.writableCorked > 0) return;
  res.cork();
  held.push(res);
  if (held.length === 1) process.nextTick(scheduleRelease);
}

const scheduleRelease = () => setImmediate(release);

function release(): void {
  for (const res of held.splice(0)) res.uncork();
}
