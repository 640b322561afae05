import { describe, expect, it } from "vitest";
import type { ToolResultEventData } from "../../protocol/events.js";
import { anthropicRequest } from "./anthropic-request.js";
import { isOfficialOpenAI, openAIRequest } from "./openai-request.js";
import type { ConversationMessage, ModelRequest } from "./provider.js";
import { resultParts } from "./result-parts.js";

const result = (extra: Partial<ToolResultEventData>): ToolResultEventData => ({
  call_id: "call_1",
  name: "t",
  is_error: false,
  content: [],
  duration_ms: 1,
  ...extra,
});

const request = (messages: ConversationMessage[], tools: ModelRequest["tools"] = []): ModelRequest => ({
  session: { id: "ses_1", config: { model: "m", tools: [], max_steps: 8, metadata: {} } },
  system: undefined,
  messages,
  tools,
  steps: 0,
  signal: new AbortController().signal,
  onDelta: () => {},
});

describe("resultParts", () => {
  it("gives the model the content, audio and resource links described in text, and never structured_content beside it", () => {
    expect(
      resultParts(
        result({
          content: [
            { type: "audio", data: "AAAA", mime_type: "audio/wav" },
            { type: "resource_link", uri: "file:///r.txt", name: "r.txt", mime_type: "text/plain" },
            { type: "text", text: "remember the milk" },
          ],
          // an MCP server's structured twin of its text (server-filesystem's read_text_file)
          structured_content: { content: "remember the milk" },
        }),
      ),
    ).toEqual([
      { type: "text", text: "[audio audio/wav, 3 bytes: not shown, this model takes no audio here]" },
      { type: "text", text: "[resource r.txt: file:///r.txt (text/plain)]" },
      { type: "text", text: "remember the milk" },
    ]);
    // an image read as MCP sends it: the image, and the same bytes as base64 in structured_content
    const png = "iVBORw0KGgo".padEnd(400, "A");
    expect(
      resultParts(
        result({
          content: [{ type: "image", data: png, mime_type: "image/png" }],
          structured_content: { content: [{ type: "image", data: png, mimeType: "image/png" }] },
        }),
      ),
    ).toEqual([{ type: "image", data: png, mime_type: "image/png" }]);
  });

  it("gives structured_content as JSON when there is no content, with base64 data replaced by a note", () => {
    const base64 = "A".repeat(400);
    expect(
      resultParts(
        result({
          structured_content: {
            n: 3,
            thumbnail: base64,
            page: `data:image/png;base64,${base64}`,
            prose: `${"word ".repeat(80)}`,
          },
        }),
      ),
    ).toEqual([
      {
        type: "text",
        text: JSON.stringify({
          n: 3,
          thumbnail: "[base64 data, 300 bytes: not shown]",
          page: "[image/png data, 300 bytes: not shown]",
          prose: "word ".repeat(80),
        }),
      },
    ]);
  });
});

describe("the Anthropic request", () => {
  it("skips an assistant turn that said nothing, drops empty text, and sends only object inputs", () => {
    const sent = anthropicRequest(
      request([
        { role: "user", content: "hi" },
        { role: "assistant", text: "", tool_calls: [] },
        { role: "user", content: "again" },
        {
          role: "assistant",
          text: "",
          tool_calls: [{ call_id: "call_x", name: "t", arguments: "{not json" }],
        },
        { role: "tool", results: [result({ call_id: "call_x", content: [{ type: "text", text: "" }] })] },
      ]),
      { model: "claude", temperature: 0.2, max_tokens: 100 },
    );
    expect(sent).toEqual({
      model: "claude",
      max_tokens: 100,
      temperature: 0.2,
      stream: true,
      messages: [
        { role: "user", content: "hi" },
        { role: "user", content: "again" },
        { role: "assistant", content: [{ type: "tool_use", id: "call_x", name: "t", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_x" }] },
      ],
    });
  });
});

describe("the Chat Completions request", () => {
  const tools = [{ name: "t", description: "d", input_schema: { type: "object" } }];

  it("knows OpenAI's own API by default and by name, and nothing else for it", () => {
    expect(isOfficialOpenAI(undefined)).toBe(true);
    expect(isOfficialOpenAI("https://api.openai.com/v1")).toBe(true);
    expect(isOfficialOpenAI("http://127.0.0.1:11434/v1")).toBe(false);
    expect(isOfficialOpenAI("https://openrouter.ai/api/v1")).toBe(false);
  });

  it("asks OpenAI for max_completion_tokens and compatible servers for max_tokens", () => {
    const messages: ConversationMessage[] = [{ role: "user", content: "hi" }];
    expect(
      openAIRequest(request(messages), { model: "gpt", max_tokens: 64, official: true, images: true }),
    ).toMatchObject({
      max_completion_tokens: 64,
    });
    const local = openAIRequest(request(messages, tools), {
      model: "qwen3",
      max_tokens: 64,
      temperature: 0,
      official: false,
      images: false,
    });
    expect(local).toEqual({
      model: "qwen3",
      messages: [{ role: "user", content: "hi" }],
      tools: [
        { type: "function", function: { name: "t", description: "d", parameters: { type: "object" } } },
      ],
      max_tokens: 64,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("gives arguments back as the model wrote them, and says an empty or failed result is one", () => {
    const sent = openAIRequest(
      request([
        { role: "user", content: "hi" },
        {
          role: "assistant",
          text: "",
          tool_calls: [{ call_id: "call_x", name: "t", arguments: "{not json" }],
        },
        { role: "tool", results: [result({ call_id: "call_x", is_error: true })] },
        {
          role: "assistant",
          text: "",
          tool_calls: [{ call_id: "call_y", name: "t", arguments: {}, provider_call_id: "p" }],
        },
        { role: "tool", results: [result({ call_id: "call_y" })] },
      ]),
      { model: "m", official: false, images: false },
    );
    expect(sent.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_x", type: "function", function: { name: "t", arguments: "{not json" } }],
      },
      { role: "tool", tool_call_id: "call_x", content: "Error: the tool failed without saying why" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "p", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "p", content: "(the tool returned no content)" },
    ]);
  });

  it("shows a tool's images in a user message after the results when the model takes images, else a note", () => {
    const messages: ConversationMessage[] = [
      { role: "user", content: "draw" },
      {
        role: "assistant",
        text: "",
        tool_calls: [
          { call_id: "call_a", name: "draw", arguments: {} },
          { call_id: "call_b", name: "scan", arguments: {} },
        ],
      },
      {
        role: "tool",
        results: [
          result({
            call_id: "call_a",
            name: "draw",
            content: [
              { type: "text", text: "a cat:" },
              { type: "image", data: "aGk=", mime_type: "image/png" },
            ],
          }),
          result({
            call_id: "call_b",
            name: "scan",
            content: [{ type: "image", data: "aGk=", mime_type: "image/tiff" }],
          }),
        ],
      },
    ];
    const seeing = openAIRequest(request(messages), { model: "gpt", official: true, images: true });
    expect(seeing.messages.slice(2)).toEqual([
      {
        role: "tool",
        tool_call_id: "call_a",
        content: "a cat:\n[image 1: image/png, shown in the message after the tool results]",
      },
      {
        role: "tool",
        tool_call_id: "call_b",
        content: "[image image/tiff, 3 bytes: not shown, this model takes no image here]",
      },
      {
        role: "user",
        content: [
          { type: "text", text: "The image that the tool results above refer to:" },
          { type: "text", text: "image 1, from draw:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,aGk=" } },
        ],
      },
    ]);
    const blind = openAIRequest(request(messages), { model: "qwen3", official: false, images: false });
    expect(blind.messages.slice(2)).toEqual([
      {
        role: "tool",
        tool_call_id: "call_a",
        content: "a cat:\n[image image/png, 3 bytes: not shown, this model takes no image here]",
      },
      {
        role: "tool",
        tool_call_id: "call_b",
        content: "[image image/tiff, 3 bytes: not shown, this model takes no image here]",
      },
    ]);
  });
});
