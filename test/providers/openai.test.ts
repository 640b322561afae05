import { describe, expect, it } from "vitest";
import { describeProviderConformance } from "./conformance.js";
import { writeSse } from "./fake-model-server.js";
import {
  type OpenAIMessage,
  type OpenAIRequestBody,
  openAIEndless,
  openAIError,
  openAIReply,
  openAIStall,
  openAIStream,
  openAIWholeCalls,
} from "./fake-openai.js";

const body = (value: unknown) => value as OpenAIRequestBody;

function messageLines(message: OpenAIMessage): string[] {
  switch (message.role) {
    case "system":
      return [];
    case "user":
      return [`user: ${message.content}`];
    case "assistant":
      return [
        ...(message.content ? [`assistant: ${message.content}`] : []),
        ...(message.tool_calls ?? []).map(
          (call) => `call ${call.id} ${call.function.name} ${call.function.arguments}`,
        ),
      ];
    case "tool": {
      const error = message.content.startsWith("Error: ");
      return [
        `result ${message.tool_call_id}${error ? " (error)" : ""}: ${error ? message.content.slice(7) : message.content}`,
      ];
    }
  }
}

const context = describeProviderConformance({
  provider: "openai",
  baseUrl: (url) => `${url}/v1`,
  text: (text, usage) => openAIReply({ text, ...(usage && { usage }) }),
  toolCalls: (calls, options = {}) =>
    openAIReply({
      tools: calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.input) })),
      ...(options.text !== undefined && { text: options.text }),
      ...(options.usage && { usage: options.usage }),
    }),
  wholeCalls: (calls) =>
    openAIWholeCalls(
      calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.input) })),
    ),
  rawToolCall: (id, name, raw) => openAIReply({ tools: [{ id, name, arguments: raw }] }),
  cut: (text) => (res) => {
    const stream = openAIStream({ text: `${text} and the rest` });
    return writeSse(res, stream, { dropAfterBytes: Math.floor(Buffer.byteLength(stream) * 0.6) });
  },
  stall: openAIStall,
  endless: openAIEndless,
  error: openAIError,
  key: (headers) => headers.authorization?.replace(/^Bearer /, ""),
  system: (value) => {
    const first = body(value).messages[0];
    return first?.role === "system" ? first.content : undefined;
  },
  tools: (value) =>
    (body(value).tools ?? []).map((tool) => {
      expect(tool.type).toBe("function");
      return {
        name: tool.function.name,
        description: tool.function.description,
        input_schema: tool.function.parameters,
      };
    }),
  transcript: (value) => body(value).messages.flatMap(messageLines),
});

describe("openai: its own wire", () => {
  it("asks for usage in the stream, and sends no max_tokens or temperature the entry does not set", async () => {
    const { fake, turn } = context();
    fake.enqueue(openAIReply({ text: "hi" }));
    await turn({});
    const sent = body(fake.requests.at(-1)?.body);
    expect(fake.requests.at(-1)?.path).toBe("/v1/chat/completions");
    expect(sent.stream_options).toEqual({ include_usage: true });
    expect(sent).not.toHaveProperty("max_tokens");
    expect(sent).not.toHaveProperty("max_completion_tokens");
    expect(sent).not.toHaveProperty("temperature");
  });

  it("describes images in text, since a tool message carries text only", async () => {
    const { fake, turn } = context();
    fake.enqueue(openAIReply({ tools: [{ id: "call_img", name: "image", arguments: '{"text":"x"}' }] }));
    fake.enqueue(openAIReply({ text: "nice chart" }));
    await turn({ tools: ["image"] });
    const last = body(fake.requests.at(-1)?.body).messages.at(-1);
    expect(last).toEqual({
      role: "tool",
      tool_call_id: "call_img",
      content: expect.stringMatching(
        /^a chart\n\[image image\/png, \d+ bytes: not shown[^\n]*\]\n\[image image\/bmp, 30 bytes: not shown/,
      ),
    });
  });

  it("gives Brain's ids to a server that leaves tool call ids out or repeats them", async () => {
    const { fake, turn } = context();
    fake.enqueue(
      openAIReply({
        tools: [
          { name: "echo", arguments: '{"text":"no id"}' },
          { id: "dup", name: "echo", arguments: '{"text":"one"}' },
          { id: "dup", name: "echo", arguments: '{"text":"two"}' },
        ],
      }),
      openAIReply({ text: "done" }),
    );
    const { stored } = await turn({ tools: ["echo"] });
    const callIds = stored.filter((e) => e.type === "tool.call").map((e) => e.data.call_id);
    const sent = body(fake.requests.at(-1)?.body).messages;
    const assistant = sent.find((m) => m.role === "assistant");
    expect(assistant?.role === "assistant" && assistant.tool_calls?.map((call) => call.id)).toEqual(callIds);
    expect(sent.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.tool_call_id)).toEqual(
      callIds,
    );
  });

  it("takes a call sent whole in one chunk, and calls it tool_use when the server says stop", async () => {
    const { fake, turn } = context();
    fake.enqueue(
      openAIReply({
        tools: [{ id: "call_w", name: "echo", arguments: '{"text":"whole"}' }],
        wholeCalls: true,
        finish_reason: "stop",
      }),
      openAIReply({ text: "done", finish_reason: "length" }),
    );
    const { stored } = await turn({ tools: ["echo"] });
    const assistants = stored.filter((e) => e.type === "message.assistant").map((e) => e.data);
    expect(assistants.map((a) => a.stop_reason)).toEqual(["tool_use", "max_tokens"]);
    expect(stored.find((e) => e.type === "tool.result")?.data.content).toEqual([
      { type: "text", text: "echo:whole" },
    ]);
  });

  it("retries an error that arrives inside the stream", async () => {
    const { fake, turn } = context();
    fake.enqueue(
      (res) =>
        writeSse(
          res,
          `${openAIStream({ text: "" }).split("\n\n")[0]}\n\ndata: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n`,
        ),
      openAIReply({ text: "second time lucky" }),
    );
    const before = fake.requests.length;
    const { stored } = await turn({});
    expect(fake.requests.length - before).toBe(2);
    expect(stored.find((e) => e.type === "message.assistant")?.data.text).toBe("second time lucky");
  });
});
