import {
  awkwardPieces,
  type Reply,
  writeJson,
  writeSse,
  writeSseAndHold,
  writeSseForever,
  writeSseFrames,
} from "./fake-model-server.js";

/**
 * OpenAI's Chat Completions API as it streams
 * (https://platform.openai.com/docs/api-reference/chat-streaming): `data:` lines, each a
 * chat.completion.chunk whose choices[0].delta carries `content` or `tool_calls` pieces (index,
 * then id, type and name once, then the arguments a few characters at a time), then a chunk with
 * the finish_reason, then — with stream_options.include_usage — a chunk with no choices and the
 * usage, then `data: [DONE]`. Errors are JSON bodies `{"error": {"message", "type", "param", "code"}}`.
 */

export interface FakeToolCall {
  /** Omitted by some compatible servers. */
  id?: string;
  name: string;
  /** The arguments text as the model wrote it: usually JSON, not always. */
  arguments: string;
}

export interface OpenAITurn {
  text?: string;
  tools?: FakeToolCall[];
  finish_reason?: string;
  usage?: { input: number; output: number };
  /** Some compatible servers send each tool call whole, in one chunk. */
  wholeCalls?: boolean;
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return data({
    id: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    object: "chat.completion.chunk",
    created: 1_741_570_283,
    model: "gpt-4o-mini-2024-07-18",
    system_fingerprint: "fp_44709d6fcb",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
}

/** The whole SSE body of one streamed completion. */
export function openAIStream(turn: OpenAITurn): string {
  const tools = turn.tools ?? [];
  let body = chunk({ role: "assistant", content: turn.text === undefined ? null : "", refusal: null });
  for (const piece of awkwardPieces(turn.text ?? "")) body += chunk({ content: piece });
  tools.forEach((tool, index) => {
    const head = { index, ...(tool.id !== undefined && { id: tool.id }), type: "function" };
    if (turn.wholeCalls) {
      body += chunk({ tool_calls: [{ ...head, function: { name: tool.name, arguments: tool.arguments } }] });
      return;
    }
    body += chunk({ tool_calls: [{ ...head, function: { name: tool.name, arguments: "" } }] });
    for (const piece of awkwardPieces(tool.arguments)) {
      body += chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  body += chunk({}, turn.finish_reason ?? (tools.length > 0 ? "tool_calls" : "stop"));
  const usage = turn.usage ?? { input: 10, output: 5 };
  body += data({
    id: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    object: "chat.completion.chunk",
    created: 1_741_570_283,
    model: "gpt-4o-mini-2024-07-18",
    choices: [],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    },
  });
  return `${body}data: [DONE]\n\n`;
}

export const openAIReply =
  (turn: OpenAITurn, options: { dropAfterBytes?: number } = {}): Reply =>
  (res) =>
    writeSse(res, openAIStream(turn), { headers: { "x-request-id": "req_9b1deb4d" }, ...options });

export const openAIError =
  (status: number, type: string, message: string, headers: Record<string, string> = {}): Reply =>
  (res) =>
    writeJson(res, status, { error: { message, type, param: null, code: null } }, headers);

/** A completion whose tool calls each come whole in one chunk, written fast, so it may be large. */
export const openAIWholeCalls =
  (tools: FakeToolCall[]): Reply =>
  (res, request) =>
    writeSseFrames(res, openAIStream({ tools, wholeCalls: true }).split(/(?<=\n\n)/), request);

/** A stream that sends `text` and then nothing, until the client leaves. */
export const openAIStall =
  (text: string): Reply =>
  (res, request) =>
    writeSseAndHold(res, chunk({ role: "assistant", content: "" }) + chunk({ content: text }), request);

/** A stream of text deltas of `piece` that never ends, as from a server ignoring max_tokens. */
export const openAIEndless =
  (piece: string): Reply =>
  (res, request) =>
    writeSseForever(res, chunk({ role: "assistant", content: "" }), chunk({ content: piece }), request);

export type OpenAIMessage =
  | { role: "system" | "user"; content: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

/** What Brain sends to Chat Completions, as far as the tests read it. */
export interface OpenAIRequestBody {
  model: string;
  stream: boolean;
  stream_options?: { include_usage: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  tools?: {
    type: "function";
    function: { name: string; description: string; parameters: Record<string, unknown> };
  }[];
  messages: OpenAIMessage[];
}

/** The tool messages that end a request, normalized for comparison across providers. */
export function openAIToolResults(body: unknown) {
  const messages = (body as OpenAIRequestBody).messages;
  const results: { id: string; is_error: boolean; text: string }[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "tool") break;
    results.unshift({
      id: message.tool_call_id,
      is_error: message.content.startsWith("Error: "),
      text: message.content,
    });
  }
  return results;
}
