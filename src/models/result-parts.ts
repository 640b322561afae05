import type { ToolResultEventData } from "../../protocol/events.js";
import type { ContentItem } from "../../protocol/result.js";

/** The image formats both providers take (Anthropic's image blocks, Chat Completions' image parts). */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

export type ResultPart = { type: "text"; text: string } | { type: "image"; data: string; mime_type: string };

/**
 * A tool result as the parts a model reads. `content` is the result as told to a reader; the
 * model reads it: text and images as they are, audio and resource links described in text.
 * `structured_content` is the same result for programs (MCP servers send both, and this
 * repository's services put in their text what the model needs), so the model gets it, as JSON
 * text, only when the content is empty: the model is never told the same thing twice. Binary
 * data is never sent as text: base64 strings inside that JSON are replaced by a note.
 */
export function resultParts(result: ToolResultEventData): ResultPart[] {
  if (result.content.length > 0 || result.structured_content === undefined) return result.content.map(partOf);
  return [{ type: "text", text: JSON.stringify(result.structured_content, withoutBinary) }];
}

function partOf(item: ContentItem): ResultPart {
  switch (item.type) {
    case "text":
      return { type: "text", text: item.text };
    case "image":
      return { type: "image", data: item.data, mime_type: item.mime_type };
    case "audio":
      return { type: "text", text: mediaNote("audio", item.mime_type, item.data) };
    case "resource_link": {
      const details = [item.mime_type, item.description].filter(Boolean).join(", ");
      return {
        type: "text",
        text: `[resource ${item.name ?? item.uri}: ${item.uri}${details ? ` (${details})` : ""}]`,
      };
    }
  }
}

/** What the model reads in place of media it cannot take. */
export function mediaNote(kind: "image" | "audio", mimeType: string, base64: string): string {
  return `[${kind} ${mimeType}, ${base64Bytes(base64)} bytes: not shown, this model takes no ${kind} here]`;
}

function base64Bytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

// shorter strings of these letters are words and ids as often as data
const MIN_BASE64_CHARS = 256;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(;[\w-]+=[^;,]*)*;base64,/;

/** A JSON.stringify replacer that puts a note in place of base64 data (a data: URL, or a long run of base64). */
function withoutBinary(_key: string, value: unknown): unknown {
  if (typeof value !== "string" || value.length < MIN_BASE64_CHARS) return value;
  const dataUrl = DATA_URL.exec(value);
  if (dataUrl)
    return `[${dataUrl[1] ?? "binary"} data, ${base64Bytes(value.slice(dataUrl[0].length))} bytes: not shown]`;
  if (value.length % 4 === 0 && BASE64.test(value))
    return `[base64 data, ${base64Bytes(value)} bytes: not shown]`;
  return value;
}
