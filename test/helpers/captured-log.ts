import { Writable } from "node:stream";

/** A logger destination that keeps everything written to it: `text()` is the log so far. */
export function captureLog(): { destination: Writable; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return { destination, text: () => chunks.join("") };
}
