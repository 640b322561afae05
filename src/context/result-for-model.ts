import type { ToolResultEventData } from "../../protocol/events.js";
import type { ContentItem } from "../../protocol/result.js";
import { type ResultPart, resultParts } from "../models/result-parts.js";

/**
 * What the model is sent of a result: the result itself when what the model reads of it (its
 * text, and its images' data) fits in `maxBytes`, else its first `maxBytes` with a note saying how
 * much was left out and where the whole is. The stored `tool.result` is never changed. Pure.
 */
export function resultForModel(result: ToolResultEventData, maxBytes: number): ToolResultEventData {
  const parts = resultParts(result);
  let total = 0;
  for (const part of parts) total += partBytes(part);
  if (total <= maxBytes) return result;
  const content: ContentItem[] = [];
  let room = maxBytes;
  for (const part of parts) {
    if (part.type === "image") {
      // an image is whole or not at all: half an image is no image
      if (part.data.length <= room) {
        content.push({ type: "image", data: part.data, mime_type: part.mime_type });
        room -= part.data.length;
      }
      continue;
    }
    if (room <= 0) continue;
    const text = utf8Prefix(part.text, room);
    content.push({ type: "text", text });
    room -= Buffer.byteLength(text, "utf8");
  }
  const sent = maxBytes - room;
  content.push({
    type: "text",
    text: `[Brain cut this result for the model: ${total - sent} of its ${total} bytes were left out (the tool's max_model_bytes is ${maxBytes}). The whole result is in the session's events, in the tool.result of call ${result.call_id}.]`,
  });
  const { structured_content: _whole, ...rest } = result;
  return { ...rest, content };
}

function partBytes(part: ResultPart): number {
  return part.type === "text" ? Buffer.byteLength(part.text, "utf8") : part.data.length;
}

/** The longest start of `text` of at most `bytes` UTF-8 bytes, never ending inside a character. */
function utf8Prefix(text: string, bytes: number): string {
  // each UTF-16 unit is at most 3 UTF-8 bytes: a text this short fits whole without encoding it
  if (text.length * 3 <= bytes) return text;
  const cut = Buffer.from(text, "utf8").subarray(0, bytes).toString("utf8");
  return cut.endsWith("\uFFFD") && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}
