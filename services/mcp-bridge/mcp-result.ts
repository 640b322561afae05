import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ContentItem, ResultObject } from "../../kit/index.js";

type McpContent = CallToolResult["content"][number];

/**
 * An MCP `tools/call` result as Brain's result object, field by field: `structuredContent` →
 * `structured_content`, `isError` → `is_error`, `mimeType` → `mime_type`; annotations, titles and
 * `_meta` dropped. An embedded resource becomes its text, or, for a blob, a link to it and a note
 * (the model is never sent binary data as text). Pure.
 */
export function brainResult(result: CallToolResult): ResultObject {
  const brain: ResultObject = { content: result.content.flatMap(contentItems) };
  if (isObject(result.structuredContent)) brain.structured_content = result.structuredContent;
  if (result.isError === true) brain.is_error = true;
  return brain;
}

function contentItems(item: McpContent): ContentItem[] {
  switch (item.type) {
    case "text":
      return [{ type: "text", text: item.text }];
    case "image":
    case "audio":
      return [{ type: item.type, data: item.data, mime_type: item.mimeType }];
    case "resource_link":
      return [
        {
          type: "resource_link",
          uri: item.uri,
          name: item.name,
          ...(item.mimeType !== undefined && { mime_type: item.mimeType }),
          ...(item.description !== undefined && { description: item.description }),
        },
      ];
    case "resource": {
      const { resource } = item;
      if ("text" in resource && typeof resource.text === "string")
        return [{ type: "text", text: resource.text }];
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      const mimeType = resource.mimeType ?? "application/octet-stream";
      return [
        { type: "resource_link", uri: resource.uri, mime_type: mimeType },
        {
          type: "text",
          text: `[embedded resource ${resource.uri}: ${mimeType}, ${base64Bytes(blob)} bytes of binary data, not shown]`,
        },
      ];
    }
    default:
      return [
        {
          type: "text",
          text: `[MCP content of type "${String((item as { type?: unknown }).type)}", not shown]`,
        },
      ];
  }
}

/** The bytes a base64 string holds, without decoding it. */
export function base64Bytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
