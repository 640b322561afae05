import type { Readable } from "node:stream";

/** What `readWhole` gives for a body past its limit. */
export const TOO_LARGE = Symbol("too large");

/**
 * A body whole (a request's), taken at its 'end'. Past `limit`, TOO_LARGE at
 * once, and no more of it is kept: past the limit nothing can be valid, and buffering more is what
 * a hostile peer wants; the caller stops the body its own way. Listened to rather than iterated:
 * an async iterator costs a promise and a turn of the microtask queue per chunk, and ends only at
 * 'close', which undici's body emits from the event loop's check phase, so every call's result
 * would wait for the loop to get there. `onSize` hears the bytes read so far after each chunk.
 */
export function readWhole(
  body: Readable,
  limit: number,
  onSize?: (size: number) => void,
): Promise<Buffer | typeof TOO_LARGE> {
  // a body that ended or went before it was listened to emits nothing more
  if (body.errored) return Promise.reject(body.errored);
  if (body.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (body.destroyed) return Promise.reject(new PrematureCloseError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      onSize?.(size);
      if (size > limit) {
        stop();
        resolve(TOO_LARGE);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // closed with no error and no end: the connection went before the body was whole
    const onClose = () => onError(new PrematureCloseError());
    const stop = () => {
      body.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
    };
    body.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

/** What a stream's async iterator throws for a body closed before its end: the same code. */
class PrematureCloseError extends Error {
  readonly code = "ERR_STREAM_PREMATURE_CLOSE";

  constructor() {
    super("the body closed before its end");
  }
}
