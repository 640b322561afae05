import type { ToolCall } from "../../protocol/events.js";

/**
 * A tool call as a model step made it, keeping its arguments' JSON text once asked for it: the
 * call's request body and both counts of its tokens (as its turn adds it, and as its session's
 * conversation folds it) read the same text, where each serialized the arguments anew
 * (BENCHMARKS.md). JSON.stringify writes the call as the plain object it stands for, in the same
 * order; the text is a private field. A class and not a WeakMap from arguments to text, as for
 * events (events/event-json.ts): a weak map's entries are work for every young-generation
 * collection.
 */
class MadeToolCall {
  readonly call_id: string;
  readonly name: string;
  readonly arguments: unknown;
  declare readonly provider_call_id?: string;
  /** null until asked for: JSON.stringify gives a string, or undefined for undefined arguments. */
  #argumentsJson: string | undefined | null = null;

  constructor(callId: string, name: string, args: unknown, providerCallId: string | undefined) {
    this.call_id = callId;
    this.name = name;
    this.arguments = args;
    if (providerCallId !== undefined) this.provider_call_id = providerCallId;
  }

  argumentsJson(): string | undefined {
    if (this.#argumentsJson === null) this.#argumentsJson = JSON.stringify(this.arguments);
    return this.#argumentsJson;
  }
}

/** A model step's tool call; nothing changes its arguments once the model gave them. */
export const madeToolCall = (
  callId: string,
  name: string,
  args: unknown,
  providerCallId: string | undefined,
): ToolCall => new MadeToolCall(callId, name, args, providerCallId);

/** A call's arguments as JSON.stringify writes them: made once for a call a model step made. */
export const argumentsJson = (call: ToolCall): string | undefined =>
  call instanceof MadeToolCall ? call.argumentsJson() : JSON.stringify(call.arguments);
