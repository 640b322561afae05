import type Anthropic from "@anthropic-ai/sdk";
import { type ModelReply, replyToolCalls } from "./provider.js";
import { AttemptError, attemptFailure } from "./provider-failure.js";
import { type StreamFold, TOOL_CALL_SIZE } from "./streamed-call.js";
import { tokenCount } from "./token-count.js";
import { parseArguments } from "./tool-arguments.js";

type StreamEvent = Anthropic.Messages.RawMessageStreamEvent;

interface ToolUse {
  id: string;
  name: string;
  /** The input from content_block_start, used when no input_json_delta follows. */
  initial: unknown;
  json: string;
}

/**
 * Folds a Messages API event stream into one reply. The stored text is exactly the text deltas
 * given out live, so what a client watched and what it reads back agree.
 */
export class AnthropicStreamFold implements StreamFold<StreamEvent> {
  #text = "";
  readonly #tools = new Map<number, ToolUse>();
  #stopReason: string | undefined;
  #stopped = false;
  #input = 0;
  #output = 0;
  #responseId: string | undefined;
  size = 0;

  /** Take one event; returns the text it adds, if any. */
  push(event: StreamEvent): string | undefined {
    switch (event.type) {
      case "message_start":
        this.#responseId = event.message.id;
        this.#setUsage(event.message.usage);
        return undefined;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "tool_use") {
          this.#tools.set(event.index, { id: block.id, name: block.name, initial: block.input, json: "" });
          // the input is kept, and some servers give it here whole instead of in deltas: it counts
          // toward the bound as much as the deltas do
          this.size +=
            TOOL_CALL_SIZE + block.id.length + block.name.length + (JSON.stringify(block.input)?.length ?? 0);
        } else if (block.type === "text" && block.text !== "") {
          this.#text += block.text;
          this.size += block.text.length;
          return block.text;
        }
        return undefined;
      }
      case "content_block_delta": {
        const delta = event.delta;
        if (delta.type === "text_delta") {
          this.#text += delta.text;
          this.size += delta.text.length;
          return delta.text;
        }
        if (delta.type === "input_json_delta") {
          const tool = this.#tools.get(event.index);
          if (tool) tool.json += delta.partial_json;
          this.size += delta.partial_json.length;
        }
        return undefined;
      }
      case "message_delta":
        this.#stopReason = event.delta.stop_reason ?? this.#stopReason;
        this.#setUsage(event.usage);
        return undefined;
      case "message_stop":
        this.#stopped = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The reply, once the stream has ended; a stream cut before message_stop is a lost connection. */
  finish(): ModelReply {
    if (!this.#stopped) {
      throw new AttemptError(
        attemptFailure("provider_connection_lost", "the model provider's stream ended before message_stop"),
      );
    }
    const tools = [...this.#tools.entries()].sort(([a], [b]) => a - b).map(([, tool]) => tool);
    return {
      text: this.#text,
      tool_calls: replyToolCalls(
        tools.map((tool) => ({
          id: tool.id,
          name: tool.name,
          arguments: tool.json === "" ? tool.initial : parseArguments(tool.json),
        })),
      ),
      stop_reason: this.#stopReason ?? "end_turn",
      usage: { input_tokens: this.#input, output_tokens: this.#output },
      ...(this.#responseId && { response_id: this.#responseId }),
    };
  }

  /**
   * message_start carries the input count, message_delta the running totals. Brain reports every
   * input token the model read, cached or not, as OpenAI's prompt_tokens does.
   */
  #setUsage(usage: Partial<Anthropic.Messages.MessageDeltaUsage> | undefined): void {
    if (!usage) return;
    const inputs = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
    if (inputs.some((count) => count != null))
      this.#input = inputs.reduce<number>((sum, n) => sum + tokenCount(n), 0);
    if (usage.output_tokens != null) this.#output = tokenCount(usage.output_tokens);
  }
}
