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
 * Anthropic's Messages API as it streams (https://docs.claude.com/en/docs/build-with-claude/streaming):
 * message_start, then per content block content_block_start / content_block_delta (text_delta,
 * input_json_delta) / content_block_stop, with pings between, then message_delta with the
 * stop_reason and the running usage, then message_stop. Errors are JSON bodies
 * `{"type": "error", "error": {"type", "message"}}`, or an `error` event inside the stream.
 */

export interface FakeToolUse {
  id: string;
  name: string;
  input: unknown;
  /** The input_json_delta text, when it is not `input` as JSON (a message cut at max_tokens). */
  raw?: string;
}

export interface AnthropicTurn {
  text?: string;
  tools?: FakeToolUse[];
  stop_reason?: string;
  usage?: { input: number; output: number; cache_read?: number };
}

const frame = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export function messageStart(usage: AnthropicTurn["usage"] = { input: 10, output: 1 }): string {
  return frame("message_start", {
    message: {
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-sonnet-4-5",
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.cache_read ?? 0,
        output_tokens: 1,
      },
    },
  });
}

/** The whole SSE body of one streamed message. */
export function anthropicStream(turn: AnthropicTurn): string {
  const usage = turn.usage ?? { input: 10, output: 5 };
  let body = messageStart(usage);
  let index = 0;
  if (turn.text !== undefined) {
    body += frame("content_block_start", { index, content_block: { type: "text", text: "" } });
    body += frame("ping", {});
    for (const piece of awkwardPieces(turn.text)) {
      body += frame("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
    }
    body += frame("content_block_stop", { index });
    index++;
  }
  for (const tool of turn.tools ?? []) {
    body += frame("content_block_start", {
      index,
      content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} },
    });
    body += frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const piece of awkwardPieces(tool.raw ?? JSON.stringify(tool.input))) {
      body += frame("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: piece },
      });
    }
    body += frame("content_block_stop", { index });
    index++;
  }
  const stopReason = turn.stop_reason ?? ((turn.tools ?? []).length > 0 ? "tool_use" : "end_turn");
  body += frame("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  body += frame("message_stop", {});
  return body;
}

export const anthropicReply =
  (turn: AnthropicTurn, options: { dropAfterBytes?: number } = {}): Reply =>
  (res) =>
    writeSse(res, anthropicStream(turn), {
      headers: { "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy" },
      ...options,
    });

export const anthropicError =
  (status: number, type: string, message: string, headers: Record<string, string> = {}): Reply =>
  (res) =>
    writeJson(
      res,
      status,
      { type: "error", error: { type, message } },
      { "request-id": "req_err", ...headers },
    );

/** A stream that starts, then fails with an error event, as the API does when it is overloaded mid-way. */
export const anthropicErrorEvent =
  (type: string, message: string): Reply =>
  (res) =>
    writeSse(
      res,
      messageStart() +
        frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
        frame("error", { error: { type, message } }),
    );

/** A stream that sends `text` and then nothing, until the client leaves. */
export const anthropicStall =
  (text: string): Reply =>
  (res, request) =>
    writeSseAndHold(
      res,
      messageStart() +
        frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
        frame("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
      request,
    );

/** A stream of text deltas of `piece` that never ends, as from a server ignoring max_tokens. */
export const anthropicEndless =
  (piece: string): Reply =>
  (res, request) =>
    writeSseForever(
      res,
      messageStart() + frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      frame("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } }),
      request,
    );

/**
 * A message whose tool_use blocks each come whole in content_block_start, input included, with no
 * input_json_delta: as some compatible servers send them. Written fast, so it may be large.
 */
export const anthropicWholeCalls =
  (tools: FakeToolUse[]): Reply =>
  (res, request) =>
    writeSseFrames(
      res,
      [
        messageStart(),
        ...tools.flatMap((tool, index) => [
          frame("content_block_start", {
            index,
            content_block: { type: "tool_use", id: tool.id, name: tool.name, input: tool.input },
          }),
          frame("content_block_stop", { index }),
        ]),
        frame("message_delta", {
          delta: { stop_reason: "tool_use", stop_sequence: null },
          usage: { output_tokens: 5 },
        }),
        frame("message_stop", {}),
      ],
      request,
    );

export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content?: AnthropicBlock[]; is_error?: boolean };

/** What Brain sends to the Messages API, as far as the tests read it. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  system?: string;
  temperature?: number;
  stream: boolean;
  tools?: { name: string; description: string; input_schema: Record<string, unknown> }[];
  messages: { role: "user" | "assistant"; content: string | AnthropicBlock[] }[];
}

/** The tool results of the last message of a request, normalized for comparison across providers. */
export function anthropicToolResults(body: unknown) {
  const last = (body as AnthropicRequestBody).messages.at(-1);
  const blocks = Array.isArray(last?.content) ? last.content : [];
  return blocks.flatMap((block) =>
    block.type === "tool_result"
      ? [
          {
            id: block.tool_use_id,
            is_error: block.is_error === true,
            text: (block.content ?? [])
              .flatMap((part) => (part.type === "text" ? [part.text] : []))
              .join("\n"),
          },
        ]
      : [],
  );
}
