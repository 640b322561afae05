import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { anthropicError } from "./fake-anthropic.js";
import { type ModelRequestSeen, type Reply, writeJson } from "./fake-model-server.js";
import type { OpenAIRequestBody } from "./fake-openai.js";

/**
 * The fake providers' own count of a request's tokens and their window, which they enforce as the
 * real APIs do: OpenAI answers 400 `context_length_exceeded`, Anthropic 400 invalid_request_error
 * "prompt is too long: N tokens > M maximum". OpenAI's count is its tokenizer's (o200k_base) over
 * every text of the request, with 4 tokens a message; Anthropic publishes no tokenizer for its
 * current models, so its fake counts with cl100k_base, another BPE tokenizer of the same kind,
 * which is not the one Brain estimates with.
 */

const AS_TEXT = { disallowedSpecial: new Set<string>() };
const PER_MESSAGE = 4;

/** Every string of a JSON value, keys aside: what a tokenizer reads of it. */
function texts(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) texts(item, out);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      // an image's data is not read as text
      if (key === "data" || key === "url") continue;
      texts(item, out);
    }
  }
  return out;
}

function count(
  body: { messages: unknown[]; system?: unknown; tools?: unknown },
  tokens: (text: string) => number,
) {
  let total = 0;
  for (const text of texts([body.system ?? "", body.messages, body.tools ?? []])) total += tokens(text);
  return total + PER_MESSAGE * (body.messages.length + 1);
}

export const openAITokens = (body: unknown) =>
  count(body as OpenAIRequestBody, (text) => o200k(text, AS_TEXT));
export const anthropicTokens = (body: unknown) =>
  count(body as { messages: unknown[] }, (text) => cl100k(text, AS_TEXT));

/**
 * Why OpenAI would refuse the messages, as it words it: a tool message that answers no call just
 * before it, or a call left without its answer.
 */
export function openAIPairingProblem(body: unknown): string | undefined {
  const messages = (body as OpenAIRequestBody).messages;
  let open: Set<string> | undefined;
  for (const message of messages) {
    if (message.role === "tool") {
      if (!open?.delete(message.tool_call_id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      continue;
    }
    if (open && open.size > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(", ")}`;
    open =
      message.role === "assistant" ? new Set((message.tool_calls ?? []).map((call) => call.id)) : undefined;
  }
  return undefined;
}

/** OpenAI's answer to a request past `window` tokens or with a call parted from its result; else `reply`'s. */
export const openAIWindowed =
  (window: number, reply: Reply, seen: { tokens: number[] }): Reply =>
  (res, request) => {
    const tokens = openAITokens(request.body);
    seen.tokens.push(tokens);
    const pairing = openAIPairingProblem(request.body);
    if (pairing)
      return writeJson(res, 400, {
        error: { message: pairing, type: "invalid_request_error", param: "messages", code: null },
      });
    if (tokens > window)
      return writeJson(res, 400, {
        error: {
          message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      });
    return reply(res, request);
  };

/** Anthropic's answer to a request past `window` tokens; else `reply`'s. */
export const anthropicWindowed =
  (window: number, reply: Reply): Reply =>
  (res, request) => {
    const tokens = anthropicTokens(request.body);
    if (tokens > window)
      return anthropicError(
        400,
        "invalid_request_error",
        `prompt is too long: ${tokens} tokens > ${window} maximum`,
      )(res, request);
    return reply(res, request);
  };

/** Whether a request is one of Brain's compactions (its instructions say so). */
export function isCompaction(request: ModelRequestSeen): boolean {
  const body = request.body as { system?: unknown; messages: { role: string; content: unknown }[] };
  const system = body.system ?? body.messages.find((message) => message.role === "system")?.content;
  return typeof system === "string" && system.startsWith("You compact the conversation");
}
