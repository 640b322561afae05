import { describe, expect, it } from "vitest";
import type { ToolResultEventData } from "../sessions/events.js";
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
  signal: new AbortController().signal,
  onDelta: () => {},
});

describe("resultParts", () => {
  it("describes audio and resource links in text, and adds structured_content as JSON once", () => {
    expect(
      resultParts(
        result({
          content: [
            { type: "audio", data: "AAAA", mime_type: "audio/wav" },
            { type: "resource_link", uri: "file:///r.txt", name: "r.txt", mime_type: "text/plain" },
            { type: "text", text: '{"b": 1, "a": [2]}' },
          ],
          structured_content: { b: 1, a: [2] },
        }),
      ),
    ).toEqual([
      { type: "text", text: "[audio audio/wav, 3 bytes: not shown, this model takes no audio here]" },
      { type: "text", text: "[resource r.txt: file:///r.txt (text/plain)]" },
      // the MCP convention: the text already is the structured content, so it is not repeated
      { type: "text", text: '{"b": 1, "a": [2]}' },
    ]);
    expect(
      resultParts(result({ content: [{ type: "text", text: "3 files" }], structured_content: { n: 3 } })),
    ).toEqual([
      { type: "text", text: "3 files" },
      { type: "text", text: '{"n":3}' },
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
    expect(openAIRequest(request(messages), { model: "gpt", max_tokens: 64, official: true })).toMatchObject({
      max_completion_tokens: 64,
    });
    const local = openAIRequest(request(messages, tools), {
      model: "qwen3",
      max_tokens: 64,
      temperature: 0,
      official: false,
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
      { model: "m", official: false },
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
});
