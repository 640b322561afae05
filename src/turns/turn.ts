import { defaultMaxListeners, setMaxListeners } from "node:events";
import {
  type NewEvent,
  type NewLiveEvent,
  type StoredEvent,
  type ToolResultEventData,
  turnFailed,
} from "../../protocol/events.js";
import { MAX_TOOL_CALLS_PER_STEP } from "../../protocol/script.js";
import type { SessionStatus } from "../../protocol/session.js";
import type { ToolBinding } from "../config/load.js";
import { newId } from "../ids.js";
import {
  type ConversationMessage,
  ModelError,
  type ModelProvider,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from "../models/provider.js";
import type { SessionRecord } from "../sessions/session-record.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import { childTraceparent, type TraceContext } from "../telemetry/trace-context.js";
import type { ToolDispatcher } from "../tools/dispatch.js";

export interface TurnDeps {
  provider: ModelProvider;
  dispatcher: ToolDispatcher;
  /** The session's enabled tools that the host config still offers to its tenant. */
  tools: ReadonlyMap<string, ToolBinding>;
  append: (events: readonly NewEvent[], setStatus?: SessionStatus) => Promise<StoredEvent[]>;
  publishLive: (event: NewLiveEvent) => void;
  inspectionFor: () => Promise<{ token: string; brainUrl: string; release: () => void }>;
  logger: Logger;
  metrics: Metrics;
}

export interface Turn {
  session: SessionRecord;
  history: readonly ConversationMessage[];
  maxSteps: number;
  signal: AbortSignal;
  /** The trace the client's message belongs to, if it sent one. */
  trace: TraceContext | undefined;
}

/**
 * One turn: model call, `message.assistant`, the tool calls it asked for (sent concurrently,
 * answered in the order asked), and again, until the model stops asking for tools, max_steps is
 * reached, the turn is interrupted, or it fails. Every `tool.call` is stored before its request
 * goes out and ends with exactly one `tool.result`.
 */
export async function runTurn(turn: Turn, deps: TurnDeps): Promise<"completed" | "interrupted" | "failed"> {
  const { session, signal } = turn;
  const messages = [...turn.history];
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const specs: ToolSpec[] = [...deps.tools.values()].map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  }));
  const interrupted = async () => {
    await deps.append(
      [{ type: "turn.interrupted", data: { reason: String(signal.reason ?? "interrupted") } }],
      "idle",
    );
    return "interrupted" as const;
  };

  for (let step = 1; ; step++) {
    if (step > turn.maxSteps) {
      await deps.append(
        [{ type: "turn.completed", data: { stop_reason: "max_steps", steps: step - 1, usage } }],
        "idle",
      );
      return "completed";
    }
    let reply: Awaited<ReturnType<ModelProvider["complete"]>>;
    try {
      reply = await deps.provider.complete({
        session: { id: session.id, config: session.config },
        system: session.config.system,
        messages,
        tools: specs,
        signal,
        onDelta: (text, attempt) => deps.publishLive({ type: "model.delta", data: { text, attempt } }),
      });
    } catch (error) {
      if (signal.aborted) return interrupted();
      const failure =
        error instanceof ModelError
          ? turnFailed(error.code, error.message)
          : turnFailed("model_error", error instanceof Error ? error.message : String(error));
      if (!(error instanceof ModelError))
        deps.logger.warn({ session_id: session.id, err: error }, "model call failed");
      await deps.append([failure], "idle");
      return "failed";
    }
    if (signal.aborted) return interrupted();
    usage.input_tokens += reply.usage.input_tokens;
    usage.output_tokens += reply.usage.output_tokens;
    if (reply.tool_calls.length > MAX_TOOL_CALLS_PER_STEP) {
      const message = `the model asked for ${reply.tool_calls.length} tool calls in one step; at most ${MAX_TOOL_CALLS_PER_STEP} are sent at once, so none was`;
      await deps.append([turnFailed("too_many_tool_calls", message)], "idle");
      return "failed";
    }

    const calls: ToolCall[] = reply.tool_calls.map((call) => ({
      call_id: newId("call"),
      name: call.name,
      arguments: call.arguments,
      ...(call.provider_call_id !== undefined && { provider_call_id: call.provider_call_id }),
    }));
    const assistant: NewEvent = {
      type: "message.assistant",
      data: { text: reply.text, tool_calls: calls, stop_reason: reply.stop_reason, usage: reply.usage },
    };
    if (calls.length === 0) {
      await deps.append(
        [assistant, { type: "turn.completed", data: { stop_reason: reply.stop_reason, steps: step, usage } }],
        "idle",
      );
      return "completed";
    }
    // the calls are stored before any request goes out, so a crash from here on leaves a trace
    await deps.append([
      assistant,
      ...calls.map(
        ({ call_id, name, arguments: args }): NewEvent => ({
          type: "tool.call",
          data: { call_id, name, arguments: args },
        }),
      ),
    ]);
    // every call runs to its end even if another's result cannot be stored, so when a turn
    // fails nothing of it is still running to write a second result
    // each call listens on the turn's signal while it runs, up to MAX_TOOL_CALLS_PER_STEP at once:
    // more than Node's default of 10 listeners is no leak here
    setMaxListeners(MAX_TOOL_CALLS_PER_STEP + defaultMaxListeners, turn.signal);
    const settled = await Promise.allSettled(calls.map((call) => callTool(turn, deps, call)));
    const results = settled.map((outcome) => {
      if (outcome.status === "rejected") throw outcome.reason;
      return outcome.value;
    });
    messages.push({ role: "assistant", text: reply.text, tool_calls: calls }, { role: "tool", results });
    if (signal.aborted) return interrupted();
  }
}

async function callTool(turn: Turn, deps: TurnDeps, call: ToolCall): Promise<ToolResultEventData> {
  const binding = deps.tools.get(call.name);
  const inspection = binding?.inspectSession ? await deps.inspectionFor() : undefined;
  const started = performance.now();
  let result: Awaited<ReturnType<ToolDispatcher["call"]>>;
  try {
    result = await deps.dispatcher.call({
      tenantId: turn.session.tenant_id,
      sessionId: turn.session.id,
      callId: call.call_id,
      name: call.name,
      arguments: call.arguments,
      binding,
      signal: turn.signal,
      onProgress: (data) =>
        deps.publishLive({ type: "tool.progress", data: { call_id: call.call_id, name: call.name, data } }),
      ...(inspection && { inspection: { token: inspection.token, brainUrl: inspection.brainUrl } }),
      ...(turn.trace && { traceparent: childTraceparent(turn.trace) }),
    });
  } finally {
    // the token stops working the moment the call returns, whatever the outcome
    inspection?.release();
  }
  const duration = performance.now() - started;
  const data: ToolResultEventData = {
    call_id: call.call_id,
    name: call.name,
    ...result,
    duration_ms: Math.round(duration * 1000) / 1000,
  };
  // the label is the binding's name, never the model's, so a model cannot grow the metric without bound
  const tool = binding?.name ?? "(unknown)";
  deps.metrics.toolCalls.inc({
    tool,
    outcome: result.error?.code ?? (result.is_error ? "tool_error" : "ok"),
  });
  deps.metrics.toolCallSeconds.observe({ tool }, duration / 1000);
  await deps.append([{ type: "tool.result", data }]);
  return data;
}
