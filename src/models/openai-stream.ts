import type OpenAI from "openai";
import { type ModelReply, replyToolCalls } from "./provider.js";
import { AttemptError, attemptFailure } from "./provider-failure.js";
import { type StreamFold, TOOL_CALL_SIZE } from "./streamed-call.js";
import { tokenCount } from "./token-count.js";
import { parseArguments } from "./tool-arguments.js";

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

interface PartialCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

/** Chat Completions finish reasons in Brain's (Anthropic's) words, so clients read one vocabulary. */
const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/**
 * Folds a Chat Completions chunk stream into one reply. The stored text is exactly the text
 * deltas given out live. Tool calls gather by `index`; the id and name come once, the arguments
 * in pieces — though some compatible servers repeat the id and name in every piece, or send the
 * whole call in one.
 */
export class OpenAIStreamFold implements StreamFold<Chunk> {
  #text = "";
  readonly #calls = new Map<number, PartialCall>();
  #finishReason: string | undefined;
  #input = 0;
  #output = 0;
  #responseId: string | undefined;
  size = 0;

  /** Take one chunk; returns the text it adds, if any. */
  push(chunk: Chunk): string | undefined {
    this.#responseId ||= chunk.id || undefined;
    if (chunk.usage) {
      this.#input = tokenCount(chunk.usage.prompt_tokens);
      this.#output = tokenCount(chunk.usage.completion_tokens);
    }
    // Brain asks for one choice; servers number it 0
    const choice = chunk.choices?.[0];
    if (!choice) return undefined;
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    (delta.tool_calls ?? []).forEach((piece, position) => {
      const index = piece.index ?? position;
      let call = this.#calls.get(index);
      if (!call) {
        call = { id: undefined, name: "", arguments: "" };
        this.#calls.set(index, call);
        this.size += TOOL_CALL_SIZE;
      }
      // the id and name are kept from their first piece, so they count once, like the arguments
      if (!call.id && piece.id) {
        call.id = piece.id;
        this.size += piece.id.length;
      }
      if (!call.name && piece.function?.name) {
        call.name = piece.function.name;
        this.size += call.name.length;
      }
      const args = piece.function?.arguments ?? "";
      call.arguments += args;
      this.size += args.length;
    });
    const text = (delta.content ?? "") + (delta.refusal ?? "");
    if (text === "") return undefined;
    this.#text += text;
    this.size += text.length;
    return text;
  }

  /** The reply, once the stream has ended; a stream cut before its finish_reason is a lost connection. */
  finish(): ModelReply {
    if (this.#finishReason === undefined) {
      throw new AttemptError(
        attemptFailure(
          "provider_connection_lost",
          "the model provider's stream ended before a finish_reason",
        ),
      );
    }
    const calls = [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    const stopReason = STOP_REASONS[this.#finishReason] ?? this.#finishReason;
    return {
      text: this.#text,
      tool_calls: replyToolCalls(
        calls.map((call) => ({
          id: call.id,
          name: call.name,
          arguments: call.arguments === "" ? {} : parseArguments(call.arguments),
        })),
      ),
      // some local servers finish a message with tool calls as "stop"; the calls say what it is
      stop_reason: calls.length > 0 && stopReason === "end_turn" ? "tool_use" : stopReason,
      usage: { input_tokens: this.#input, output_tokens: this.#output },
      ...(this.#responseId && { response_id: this.#responseId }),
    };
  }
}
