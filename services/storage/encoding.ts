import { base64Bytes } from "../../runtime/base64.js";
import { fail, type Outcome, ok } from "./errors.js";

export type Encoding = "utf8" | "base64";

/** The bytes a write's `content` stands for. */
export function decodeContent(content: string, encoding: Encoding): Outcome<Buffer> {
  if (encoding === "utf8") return ok(Buffer.from(content, "utf8"));
  const bytes = base64Bytes(content);
  return bytes
    ? ok(bytes)
    : fail("invalid_argument", 'content is not valid base64; send text with encoding "utf8"');
}

export interface TextWindow {
  text: string;
  /** Bytes skipped at the start: the tail of a character that began before the window. */
  skipped: number;
  /** Bytes decoded; a character cut off at the end is left for the next read. */
  length: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decode a window of an object as UTF-8. A range read may start or end inside a character: those
 * partial bytes are moved out of the window (and the reported offset and length say so), so a
 * reader paging through text with next_offset never sees a broken character.
 */
export function decodeTextWindow(data: Buffer, atStart: boolean, atEnd: boolean): Outcome<TextWindow> {
  let start = 0;
  if (!atStart) {
    while (start < Math.min(3, data.length) && isContinuation(data[start] as number)) start++;
  }
  let end = data.length;
  if (!atEnd) end = completeEnd(data, start);
  try {
    return ok({ text: utf8.decode(data.subarray(start, end)), skipped: start, length: end - start });
  } catch {
    return fail("not_utf8", 'the bytes are not UTF-8 text; read them with encoding "base64"');
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** The end of the last whole character: a lead byte whose continuation bytes did not all arrive is cut. */
function completeEnd(data: Buffer, start: number): number {
  for (let back = 1; back <= 4 && data.length - back >= start; back++) {
    const byte = data[data.length - back] as number;
    if (isContinuation(byte)) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? data.length - back : data.length;
  }
  return data.length;
}
