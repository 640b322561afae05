import { expect, it } from "vitest";
import { checkResultObject } from "../../protocol/result.js";
import { brainResult } from "../../services/mcp-bridge/mcp-result.js";

it("maps every kind of MCP content field by field, dropping annotations and _meta", () => {
  const result = brainResult({
    content: [
      { type: "text", text: "hi", annotations: { audience: ["user"], priority: 1 }, _meta: { x: 1 } },
      { type: "image", data: "aGk=", mimeType: "image/png", annotations: { priority: 0.5 } },
      { type: "audio", data: "aGk=", mimeType: "audio/wav" },
      {
        type: "resource_link",
        uri: "file:///a.txt",
        name: "a.txt",
        title: "A",
        mimeType: "text/plain",
        description: "the a",
      },
      { type: "resource", resource: { uri: "file:///b.txt", mimeType: "text/plain", text: "bee" } },
      {
        type: "resource",
        resource: {
          uri: "file:///c.gz",
          mimeType: "application/gzip",
          blob: "H4sIAAAAAAAAA8tIzcnJBwCGphA2BQAAAA==",
        },
      },
    ],
    structuredContent: { n: 1 },
    isError: false,
    _meta: { trace: "t" },
  });
  expect(result).toEqual({
    content: [
      { type: "text", text: "hi" },
      { type: "image", data: "aGk=", mime_type: "image/png" },
      { type: "audio", data: "aGk=", mime_type: "audio/wav" },
      {
        type: "resource_link",
        uri: "file:///a.txt",
        name: "a.txt",
        mime_type: "text/plain",
        description: "the a",
      },
      { type: "text", text: "bee" },
      { type: "resource_link", uri: "file:///c.gz", mime_type: "application/gzip" },
      {
        type: "text",
        text: "[embedded resource file:///c.gz: application/gzip, 25 bytes of binary data, not shown]",
      },
    ],
    structured_content: { n: 1 },
  });
  // what Brain checks a result with accepts it
  expect(checkResultObject(result, undefined)).not.toHaveProperty("problem");
});

it("keeps isError and an empty content list valid for Brain", () => {
  const result = brainResult({ content: [], isError: true });
  expect(result).toEqual({ content: [], is_error: true });
  expect(checkResultObject(result, undefined)).toMatchObject({ is_error: true, content: [] });
});
