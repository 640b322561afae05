import { setTimeout as sleep } from "node:timers/promises";
import type { ScriptedCompaction, ScriptedStep } from "../../protocol/script.js";
import { packedMap } from "../packed.js";
import {
  type ConversationMessage,
  ModelError,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
} from "./provider.js";

/**
 * The deterministic model: plays a script of steps, one per model call, with no network. The step
 * for a call is the number of assistant messages already in the session, so a session replays
 * the same way after a restart. The session's `script` wins over the model entry's.
 */
export class ScriptedModel implements ModelProvider {
  constructor(private readonly script: readonly ScriptedStep[] | undefined) {}

  recordedCompaction(session: ModelRequest["session"], steps: number): ScriptedCompaction | undefined {
    return (session.config.script ?? this.script)?.[steps]?.compaction;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const script = request.session.config.script ?? this.script;
    if (request.compaction) return summaryOf(request.messages);
    const index = request.steps;
    const step: ScriptedStep | undefined = script ? script[index] : { text: "You said: {{message}}" };
    if (!step) {
      throw new ModelError(
        "script_exhausted",
        `the scripted model has no step ${index + 1}: its script has ${script?.length ?? 0} steps`,
      );
    }
    if (step.delay_ms) await sleep(step.delay_ms, undefined, { signal: request.signal });
    request.signal.throwIfAborted();
    if (step.error !== undefined) throw new ModelError("model_error", step.error);

    // the conversation is searched only for a step that has a template to fill: the search walks
    // back to the turn's user message, through every call the turn made so far
    const values = new TemplateValues(request.messages);
    const text = fill(step.text ?? "", values);
    if (text !== "") request.onDelta(text, 1);
    const toolCalls = packedMap(step.tool_calls ?? [], (call) => ({
      name: call.name,
      arguments: fillDeep(call.arguments, values),
    }));
    return {
      text,
      tool_calls: toolCalls,
      stop_reason: step.stop_reason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
      usage: step.usage ?? { input_tokens: 0, output_tokens: 0 },
    };
  }
}

/** A compaction's summary, made up without a model: the start of the transcript it was given. */
function summaryOf(messages: readonly ConversationMessage[]): ModelReply {
  const first = messages[0];
  const transcript = first?.role === "user" ? first.content : "";
  return {
    text: `The conversation so far began: ${transcript.slice(0, SUMMARY_CHARS)}`,
    tool_calls: [],
    stop_reason: "end_turn",
    usage: { input_tokens: 0, output_tokens: 0 },
  };
}

const SUMMARY_CHARS = 200;

/**
 * The last user message and the text of the last tool result, found from the end the first time a
 * template asks, so a step late in a long session costs what an early one does.
 */
class TemplateValues {
  #found: Record<string, string> | undefined;

  constructor(private readonly messages: readonly ConversationMessage[]) {}

  get(key: string): string {
    this.#found ??= templateValues(this.messages);
    return this.#found[key] ?? "";
  }
}

function templateValues(messages: readonly ConversationMessage[]): Record<string, string> {
  let message: string | undefined;
  let result: string | undefined;
  for (let i = messages.length - 1; i >= 0 && (message === undefined || result === undefined); i--) {
    const entry = messages[i] as ConversationMessage;
    if (entry.role === "user") message ??= entry.content;
    else if (entry.role === "tool" && result === undefined) {
      const last = entry.results.at(-1);
      result = last ? resultText(last.content, last.structured_content) : "";
    }
  }
  return { message: message ?? "", result: result ?? "" };
}

function resultText(content: readonly { type: string; text?: string }[], structured: unknown): string {
  const texts = content.flatMap((item) =>
    item.type === "text" && item.text !== undefined ? [item.text] : [],
  );
  if (texts.length > 0) return texts.join("\n");
  return structured === undefined ? "" : JSON.stringify(structured);
}

function fill(template: string, values: TemplateValues): string {
  if (!template.includes("{{")) return template;
  return template.replace(/\{\{(message|result)\}\}/g, (_, key: string) => values.get(key));
}

function fillDeep(value: unknown, values: TemplateValues): unknown {
  if (typeof value === "string") return fill(value, values);
  if (Array.isArray(value)) return value.map((item) => fillDeep(item, values));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillDeep(item, values)]));
  }
  return value;
}
