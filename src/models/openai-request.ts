import type OpenAI from "openai";
import type { ToolResultEventData } from "../../protocol/events.js";
import { type ConversationMessage, type ModelRequest, wireCallId, wireCallIds } from "./provider.js";
import { IMAGE_TYPES, mediaNote, type ResultPart, resultParts } from "./result-parts.js";

type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;
type ImagePart = Extract<ResultPart, { type: "image" }>;

export interface OpenAISettings {
  model: string;
  max_tokens?: number | undefined;
  temperature?: number | undefined;
  /**
   * OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse `max_tokens`);
   * compatible servers (vLLM, Ollama, llama.cpp, LM Studio) all know `max_tokens`.
   */
  official: boolean;
  /** Whether the model takes images (image parts in user messages); else it reads a note. */
  images: boolean;
}

/** Whether `base_url` is OpenAI's own API: by default, or named. */
export function isOfficialOpenAI(baseUrl: string | undefined): boolean {
  return baseUrl === undefined || new URL(baseUrl).hostname === "api.openai.com";
}

/** The streamed Chat Completions request for one model call. */
export function openAIRequest(
  request: ModelRequest,
  settings: OpenAISettings,
): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const { max_tokens: maxTokens } = settings;
  return {
    model: settings.model,
    messages: [
      ...(request.system ? [{ role: "system" as const, content: request.system }] : []),
      ...openAIMessages(request.messages, settings.images),
    ],
    ...(request.tools.length > 0 && {
      tools: request.tools.map((tool) => ({
        type: "function" as const,
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    }),
    ...(maxTokens !== undefined &&
      (settings.official ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens })),
    ...(settings.temperature !== undefined && { temperature: settings.temperature }),
    stream: true,
    stream_options: { include_usage: true },
  };
}

export function openAIMessages(messages: readonly ConversationMessage[], images: boolean): MessageParam[] {
  const out: MessageParam[] = [];
  const wireIdOf = wireCallIds(messages);
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "summary":
        out.push({ role: "user", content: message.text });
        break;
      case "assistant": {
        if (message.text === "" && message.tool_calls.length === 0) break; // says nothing to the model
        out.push({
          role: "assistant",
          content: message.text === "" ? null : message.text,
          ...(message.tool_calls.length > 0 && {
            tool_calls: message.tool_calls.map((call) => ({
              id: wireCallId(call),
              type: "function" as const,
              function: {
                name: call.name,
                // arguments that were not JSON go back as the model wrote them
                arguments:
                  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
              },
            })),
          }),
        });
        break;
      }
      case "tool": {
        const shown: { tool: string; image: ImagePart }[] = [];
        for (const result of message.results) {
          const showImage = (image: ImagePart) => {
            if (!images || !IMAGE_TYPES.has(image.mime_type))
              return mediaNote("image", image.mime_type, image.data);
            shown.push({ tool: result.name, image });
            return `[image ${shown.length}: ${image.mime_type}, shown in the message after the tool results]`;
          };
          out.push({
            role: "tool",
            tool_call_id: wireIdOf(result.call_id),
            content: toolResultText(result, showImage),
          });
        }
        // a tool message carries text only: the images follow, as the model's own input
        if (shown.length > 0) out.push({ role: "user", content: imageParts(shown) });
        break;
      }
    }
  }
  return out;
}

/**
 * A tool message carries text only, so an image is what `showImage` says of it; Chat Completions
 * has no error flag, so an error result says so in its first word.
 */
export function toolResultText(result: ToolResultEventData, showImage: (image: ImagePart) => string): string {
  const text = resultParts(result)
    .map((part) => (part.type === "text" ? part.text : showImage(part)))
    .join("\n");
  if (result.is_error) return `Error: ${text || "the tool failed without saying why"}`;
  return text || "(the tool returned no content)";
}

function imageParts(shown: readonly { tool: string; image: ImagePart }[]): ContentPart[] {
  return [
    {
      type: "text",
      text: `The ${shown.length === 1 ? "image" : "images"} that the tool results above refer to:`,
    },
    ...shown.flatMap(({ tool, image }, i): ContentPart[] => [
      { type: "text", text: `image ${i + 1}, from ${tool}:` },
      { type: "image_url", image_url: { url: `data:${image.mime_type};base64,${image.data}` } },
    ]),
  ];
}
