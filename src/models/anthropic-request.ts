import type Anthropic from "@anthropic-ai/sdk";
import type { ToolResultEventData } from "../../protocol/events.js";
import { type ConversationMessage, type ModelRequest, wireCallId, wireCallIds } from "./provider.js";
import { IMAGE_TYPES, mediaNote, resultParts } from "./result-parts.js";

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;
type ToolResultContent = Exclude<ToolResultBlockParam["content"], string | undefined>;
type ImageMediaType = Anthropic.Messages.Base64ImageSource["media_type"];

/** The Messages API requires max_tokens; this one is used when the model entry sets none. */
export const DEFAULT_MAX_TOKENS = 8192;

export interface AnthropicSettings {
  model: string;
  max_tokens?: number | undefined;
  temperature?: number | undefined;
}

/** The streamed Messages API request for one model call. */
export function anthropicRequest(
  request: ModelRequest,
  settings: AnthropicSettings,
): Anthropic.Messages.MessageCreateParamsStreaming {
  return {
    model: settings.model,
    max_tokens: settings.max_tokens ?? DEFAULT_MAX_TOKENS,
    ...(request.system && { system: request.system }),
    ...(settings.temperature !== undefined && { temperature: settings.temperature }),
    messages: anthropicMessages(request.messages),
    ...(request.tools.length > 0 && {
      tools: request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema as Anthropic.Messages.Tool.InputSchema,
      })),
    }),
    stream: true,
  };
}

export function anthropicMessages(messages: readonly ConversationMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  const wireIdOf = wireCallIds(messages);
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      // the API joins it with the user message that follows, as one turn
      case "summary":
        out.push({ role: "user", content: message.text });
        break;
      case "assistant": {
        const content: ContentBlockParam[] = [];
        if (message.text !== "") content.push({ type: "text", text: message.text });
        for (const call of message.tool_calls) {
          content.push({
            type: "tool_use",
            id: wireCallId(call),
            name: call.name,
            // the API takes only an object; arguments that were not one already failed validation,
            // and the tool result the model reads next says so
            input: isObject(call.arguments) ? call.arguments : {},
          });
        }
        // the API refuses an empty assistant turn, and one that said nothing tells the model nothing
        if (content.length > 0) out.push({ role: "assistant", content });
        break;
      }
      case "tool":
        out.push({
          role: "user",
          content: message.results.map((result) => toolResultBlock(result, wireIdOf(result.call_id))),
        });
        break;
    }
  }
  return out;
}

function toolResultBlock(result: ToolResultEventData, toolUseId: string): ToolResultBlockParam {
  const content = resultParts(result).flatMap((part): ToolResultContent => {
    if (part.type === "text") return part.text === "" ? [] : [{ type: "text", text: part.text }];
    if (!IMAGE_TYPES.has(part.mime_type)) {
      return [{ type: "text", text: mediaNote("image", part.mime_type, part.data) }];
    }
    return [
      {
        type: "image",
        source: { type: "base64", media_type: part.mime_type as ImageMediaType, data: part.data },
      },
    ];
  });
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    ...(content.length > 0 && { content }),
    ...(result.is_error && { is_error: true }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
