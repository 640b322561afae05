import type { ToolResultEventData } from "../sessions/events.js";
import type { ContentItem } from "../tools/result.js";

export type ResultPart = { type: "text"; text: string } | { type: "image"; data: string; mime_type: string };

/**
 * A tool result as the parts a model reads: text and images as they are, audio and resource links
 * described in text, and `structured_content` as JSON text — unless a text item already is that
 * JSON (the MCP convention of sending both), which would tell the model the same thing twice.
 */
export function resultParts(result: ToolResultEventData): ResultPart[] {
  const parts = result.content.map(partOf);
  const structured = result.structured_content;
  if (structured !== undefined) {
    const json = JSON.stringify(structured);
    if (!parts.some((part) => part.type === "text" && sameJson(part.text, json))) {
      parts.push({ type: "text", text: json });
    }
  }
  return parts;
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
  const bytes = Math.floor((base64.length * 3) / 4);
  return `[${kind} ${mimeType}, ${bytes} bytes: not shown, this model takes no ${kind} here]`;
}

function sameJson(text: string, json: string): boolean {
  if (!text.trimStart().startsWith("{")) return false;
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}
