import type { ModelEntry } from "../config/schema.js";
import type { ToolResultEventData } from "../sessions/events.js";
import type { SessionConfig } from "../sessions/session-config.js";

export interface ToolCall {
  call_id: string;
  name: string;
  /** As the model gave them: usually an object, but a model can produce anything. */
  arguments: unknown;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** The conversation as a provider sees it, folded from the session's stored events. */
export type ConversationMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; text: string; tool_calls: ToolCall[] }
  | { role: "tool"; results: ToolResultEventData[] };

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ModelRequest {
  session: { id: string; config: SessionConfig };
  system: string | undefined;
  messages: readonly ConversationMessage[];
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** Live text as it arrives; never stored. */
  onDelta: (text: string) => void;
}

export interface ModelReply {
  text: string;
  tool_calls: { name: string; arguments: unknown }[];
  stop_reason: string;
  usage: Usage;
}

export interface ModelProvider {
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** A model call that failed for good: ends the turn with `turn.failed` carrying this code and message. */
export class ModelError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

export type ModelProviderFactory = (entry: ModelEntry) => ModelProvider;
