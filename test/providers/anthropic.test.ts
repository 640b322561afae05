import { describe, expect, it } from "vitest";
import { ofType } from "../helpers/turns.js";
import { describeProviderConformance, PNG_BASE64 } from "./conformance.js";
import {
  type AnthropicBlock,
  type AnthropicRequestBody,
  anthropicEndless,
  anthropicError,
  anthropicErrorEvent,
  anthropicReply,
  anthropicStall,
  anthropicStream,
  anthropicWholeCalls,
} from "./fake-anthropic.js";
import { writeSse } from "./fake-model-server.js";

const body = (value: unknown) => value as AnthropicRequestBody;

function blockLines(role: string, block: AnthropicBlock): string[] {
  switch (block.type) {
    case "text":
      return [`${role}: ${block.text}`];
    case "image":
      return [`${role}: [image ${block.source.media_type}]`];
    case "tool_use":
      return [`call ${block.id} ${block.name} ${JSON.stringify(block.input)}`];
    case "tool_result": {
      const text = (block.content ?? [])
        .flatMap((part) => (part.type === "text" ? [part.text] : []))
        .join("\n");
      return [`result ${block.tool_use_id}${block.is_error ? " (error)" : ""}: ${text}`];
    }
  }
}

const context = describeProviderConformance({
  provider: "anthropic",
  baseUrl: (url) => url,
  text: (text, usage) => anthropicReply({ text, ...(usage && { usage }) }),
  toolCalls: (calls, options = {}) =>
    anthropicReply({
      tools: calls,
      ...(options.text !== undefined && { text: options.text }),
      ...(options.usage && { usage: options.usage }),
    }),
  wholeCalls: anthropicWholeCalls,
  // the API's JSON is whole unless max_tokens cut the message off mid-call
  rawToolCall: (id, name, raw) =>
    anthropicReply({ tools: [{ id, name, input: {}, raw }], stop_reason: "max_tokens" }),
  cut: (text) => (res) => {
    const stream = anthropicStream({ text: `${text} and the rest` });
    return writeSse(res, stream, { dropAfterBytes: Math.floor(Buffer.byteLength(stream) * 0.6) });
  },
  stall: anthropicStall,
  endless: anthropicEndless,
  error: anthropicError,
  key: (headers) => {
    const bearer = headers.authorization?.replace(/^Bearer /, "");
    return (headers["x-api-key"] as string | undefined) ?? bearer;
  },
  system: (value) => body(value).system,
  tools: (value) => body(value).tools ?? [],
  transcript: (value) =>
    body(value).messages.flatMap((message) =>
      typeof message.content === "string"
        ? [`${message.role}: ${message.content}`]
        : message.content.flatMap((block) => blockLines(message.role, block)),
    ),
});

describe("anthropic: its own wire", () => {
  it("gives images back as image blocks, and describes a type the API does not take", async () => {
    const { fake, turn } = context();
    fake.enqueue(anthropicReply({ tools: [{ id: "toolu_img", name: "image", input: { text: "x" } }] }));
    fake.enqueue(anthropicReply({ text: "nice chart" }));
    await turn({ tools: ["image"] });
    const last = body(fake.requests.at(-1)?.body).messages.at(-1);
    expect(last).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_img",
          content: [
            { type: "text", text: "a chart" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
            { type: "text", text: expect.stringMatching(/^\[image image\/bmp, 30 bytes: not shown/) },
          ],
        },
      ],
    });
  });

  it("retries 529 overloaded, and an overloaded_error event in the middle of a stream", async () => {
    const { fake, turn } = context();
    fake.enqueue(
      anthropicError(529, "overloaded_error", "Overloaded"),
      anthropicErrorEvent("overloaded_error", "Overloaded"),
      anthropicReply({ text: "made it" }),
    );
    const before = fake.requests.length;
    const { stored } = await turn({});
    expect(fake.requests.length - before).toBe(3);
    expect(stored.at(-1)?.type).toBe("turn.completed");
  });

  it("fails with the provider's code and message when it gives up on an overloaded API", async () => {
    const { fake, turn } = context();
    fake.enqueue(...[1, 2, 3].map(() => anthropicError(529, "overloaded_error", "Overloaded")));
    const { stored } = await turn({});
    expect(stored.at(-1)?.data).toEqual({
      error: {
        code: "provider_overloaded",
        message: "the model provider answered 529 (overloaded_error): Overloaded (gave up after 3 attempts)",
      },
    });
  });

  it("counts cached input tokens as input, and asks for max_tokens 8192 by default", async () => {
    const { fake, turn } = context();
    fake.enqueue(anthropicReply({ text: "cached", usage: { input: 10, output: 2, cache_read: 100 } }));
    const { stored } = await turn({});
    expect(ofType(stored, "turn.completed").at(-1)?.data.usage).toEqual({
      input_tokens: 110,
      output_tokens: 2,
    });
    expect(body(fake.requests.at(-1)?.body).max_tokens).toBe(8192);
  });
});
