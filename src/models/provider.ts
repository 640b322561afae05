import type { ToolResultEventData } from "../../protocol/events.js";
import type { ScriptedCompaction } from "../../protocol/script.js";
import type { SessionConfig } from "../../protocol/session.js";
import type { ModelFailureCode } from "../../protocol/turn-failures.js";
import type { ModelConfig } from "../config/load.js";
import { packedMap } from "../packed.js";
import type { Logger } from "../telemetry/logger.js";

export interface ToolCall {
  call_id: string;
  name: string;
  /** As the model gave them: usually an object, but a model can produce anything. */
  arguments: unknown;
  /** The provider's own id for the call, given back to it with the result (see `wireCallId`). */
  provider_call_id?: string;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * The conversation as a provider sees it, folded from the session's stored events. A `summary`
 * stands in for the turns a compaction replaced (see src/context/): providers send it as a user
 * message; `steps` counts the model steps it replaced, which the scripted model counts as played.
 */
export type ConversationMessage =
  | { role: "user"; content: string }
  | { role: "summary"; text: string; steps: number }
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
  /**
   * The model steps the session made so far (a summary counts the steps it replaced): where a
   * scripted model stands, known without walking the conversation.
   */
  steps: number;
  /** Set when this call writes a summary of the conversation (a compaction) rather than a step. */
  compaction?: true;
  /**
   * Live text as it arrives; never stored. `attempt` counts the tries of this model call from 1:
   * text of an attempt that failed and was retried is superseded by the next attempt's.
   */
  onDelta: (text: string, attempt: number) => void;
  /** Told before each retry: the attempt about to be made (2 for the first retry), the failure code of the last, the wait before it. */
  onRetry?: (attempt: number, code: string, waitMs: number) => void;
  /** The logger of the call's lines (its retries): the turn's, with its trace ids; the provider's without. */
  logger?: Logger;
}

export interface ModelReply {
  text: string;
  tool_calls: { name: string; arguments: unknown; provider_call_id?: string }[];
  stop_reason: string;
  usage: Usage;
  /** The provider's id of its response (`msg_…`, `chatcmpl-…`), where it gives one. */
  response_id?: string;
}

export interface ModelProvider {
  complete(request: ModelRequest): Promise<ModelReply>;
  /**
   * A compaction a recording made just before the model step `steps` (counted from 0): a replaying
   * model makes it as recorded, wherever its own window would have. Only the scripted model has any.
   */
  recordedCompaction?(session: ModelRequest["session"], steps: number): ScriptedCompaction | undefined;
}

/** A model call that failed for good: ends the turn with `turn.failed` carrying this code and message. */
export class ModelError extends Error {
  constructor(
    readonly code: ModelFailureCode,
    message: string,
    /** For `context_exceeded`: the conversation's tokens and the window, for `turn.failed`. */
    readonly context?: { tokens?: number; context_window?: number },
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/**
 * The id a provider sees for a call: its own when it gave one, else Brain's (a call made by another
 * model, e.g. the scripted one). Brain's `call_…` ids fit both providers' id formats, but a
 * provider's own id is the one it is sure to accept (some compatible servers demand their format).
 */
export function wireCallId(call: ToolCall): string {
  return call.provider_call_id ?? call.call_id;
}

/**
 * The id a provider knows each call of `messages` by, keyed by Brain's id: a tool result names its
 * call by Brain's id, and goes back to the model under the call's wire id.
 */
export function wireCallIds(messages: readonly ConversationMessage[]): (callId: string) => string {
  const ids = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "assistant")
      for (const call of message.tool_calls) ids.set(call.call_id, wireCallId(call));
  }
  return (callId) => ids.get(callId) ?? callId;
}

/**
 * A reply's tool calls in the order given, each with the provider's id kept only where it is
 * non-empty and unique in the reply: a server that omits or repeats ids would make results
 * ambiguous, so those calls go by Brain's ids instead.
 */
export function replyToolCalls(
  calls: readonly { id: string | undefined; name: string; arguments: unknown }[],
): ModelReply["tool_calls"] {
  const counts = new Map<string, number>();
  for (const { id } of calls) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  return packedMap(calls, ({ id, name, arguments: args }) => ({
    name,
    arguments: args,
    ...(id && counts.get(id) === 1 && { provider_call_id: id }),
  }));
}

export type ModelProviderFactory = (entry: ModelConfig) => ModelProvider;
