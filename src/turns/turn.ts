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
import type { ContextHistory } from "../context/history.js";
import type { ContextKeeper } from "../context/keeper.js";
import { newId } from "../ids.js";
import {
  ModelError,
  type ModelProvider,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from "../models/provider.js";
import { argumentsJson, madeToolCall } from "../models/tool-call.js";
import { packedMap } from "../packed.js";
import type { SessionRecord } from "../sessions/session-record.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import type { ToolCaller } from "../tools/dispatch.js";
import { type ApprovalAnswer, type ApprovalWatch, refusalOf } from "./approvals.js";
import { LEASE_LOST, SHUTDOWN } from "./leases.js";

export interface TurnDeps {
  provider: ModelProvider;
  /** Keeps the conversation inside the model's context window. */
  context: ContextKeeper;
  dispatcher: ToolCaller;
  /** The session's enabled tools that the host config still offers to its tenant. */
  tools: ReadonlyMap<string, ToolBinding>;
  append: (events: readonly NewEvent[], setStatus?: SessionStatus) => Promise<StoredEvent[]>;
  publishLive: (event: NewLiveEvent) => void;
  inspectionFor: () => Promise<{ token: string; brainUrl: string; release: () => void }>;
  /** Answers to the calls that wait for approval, opened before the first is asked for. */
  approvals: () => Promise<ApprovalWatch>;
  /** How long a call waits for approval. */
  approvalTimeoutMs: number;
  /** Record that nobody answered a call in time, unless someone just did. */
  expireApproval: (call: ToolCall) => Promise<void>;
  logger: Logger;
  metrics: Metrics;
}

export interface Turn {
  session: SessionRecord;
  /** The conversation before this turn's next model call (or, resumed, before its open step): the turn adds to it. */
  history: ContextHistory;
  maxSteps: number;
  /** Input and output tokens the turn may use over its model calls; 0 for no budget. */
  maxTokens: number;
  signal: AbortSignal;
  /** A turn taken over from an owner that is gone, whose last step still has calls out. */
  resume?: OpenStep;
}

/** A step whose calls are not all answered, as the log has it: where a resumed turn picks up. */
export interface OpenStep {
  /** Steps made so far, this one included, and the tokens they used. */
  step: number;
  usage: Usage;
  text: string;
  calls: ToolCall[];
  results: ReadonlyMap<string, ToolResultEventData>;
  /** The calls whose approval was asked for, with when the asking runs out. */
  requested: ReadonlyMap<string, string>;
  answers: ReadonlyMap<string, ApprovalAnswer>;
}

type TurnEnd = "completed" | "interrupted" | "failed";

/** A step's empty maps: a step that asked for no approval, and has no result yet, shares these. */
const NONE: ReadonlyMap<string, never> = new Map<string, never>();

/** Stop reasons after which a call that waits for approval keeps waiting, for the turn's next owner. */
const LEFT_WAITING = new Set<unknown>([SHUTDOWN, LEASE_LOST]);

/**
 * A turn whose calls still wait for approval when Brain stops (or loses the turn): nothing more is
 * recorded, so the turn stays running and its next owner picks it up where it stands.
 */
export class TurnLeftWaiting extends Error {
  constructor(sessionId: string) {
    super(`the turn of ${sessionId} was left waiting for approval`);
  }
}

/**
 * One turn: model call, `message.assistant`, the tool calls it asked for (sent concurrently,
 * answered in the order asked), and again, until the model stops asking for tools, max_steps is
 * reached, the budget is spent, the turn is interrupted, or it fails. Every `tool.call` is stored
 * before its request goes out and ends with exactly one `tool.result`; a call of a binding with
 * approval "always" is sent only once a person approved it.
 */
export async function runTurn(turn: Turn, deps: TurnDeps): Promise<TurnEnd> {
  const { session, signal } = turn;
  const { history } = turn;
  const usage: Usage = turn.resume ? { ...turn.resume.usage } : { input_tokens: 0, output_tokens: 0 };
  const specs: ToolSpec[] = packedMap([...deps.tools.values()], (tool) => ({
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
  const approvals = new LazyApprovals(deps);
  // each call waiting for an answer listens on the turn's signal, up to MAX_TOOL_CALLS_PER_STEP at
  // once: more than Node's default of 10 listeners is no leak here
  setMaxListeners(MAX_TOOL_CALLS_PER_STEP + defaultMaxListeners, signal);
  try {
    let open = turn.resume;
    for (let step = open ? open.step : 1; ; step++) {
      if (!open) {
        const opened = await modelStep(turn, deps, { step, history, specs, usage });
        if (typeof opened === "string") return opened === "interrupted" ? interrupted() : opened;
        open = opened;
      }
      const results = await runCalls(turn, deps, open, approvals);
      history.push({ role: "assistant", text: open.text, tool_calls: open.calls });
      history.push({ role: "tool", results });
      open = undefined;
      if (signal.aborted) return interrupted();
    }
  } finally {
    approvals.close();
  }

  /** The next model call and what it asked: the step's calls, or how the turn ended. */
  async function modelStep(
    turn: Turn,
    deps: TurnDeps,
    at: { step: number; history: ContextHistory; specs: ToolSpec[]; usage: Usage },
  ): Promise<OpenStep | TurnEnd> {
    const { step } = at;
    if (step > turn.maxSteps) {
      await deps.append(
        [{ type: "turn.completed", data: { stop_reason: "max_steps", steps: step - 1, usage: at.usage } }],
        "idle",
      );
      return "completed";
    }
    const spent = at.usage.input_tokens + at.usage.output_tokens;
    if (turn.maxTokens > 0 && spent >= turn.maxTokens) {
      const message = `the turn used ${spent} tokens of its budget of ${turn.maxTokens}, so no further model call was made`;
      await deps.append([turnFailed("budget_exhausted", message, { ...at.usage })], "idle");
      return "failed";
    }
    let reply: Awaited<ReturnType<ModelProvider["complete"]>>;
    try {
      const system = session.config.system;
      reply = await deps.context.complete(at.history, { system, tools: at.specs }, (history) =>
        deps.provider.complete({
          session: { id: session.id, config: session.config },
          system,
          messages: history.messages(),
          tools: at.specs,
          steps: history.steps(),
          signal,
          logger: deps.logger,
          onDelta: (text, attempt) => deps.publishLive({ type: "model.delta", data: { text, attempt } }),
        }),
      );
    } catch (error) {
      if (signal.aborted) return "interrupted";
      const failure =
        error instanceof ModelError
          ? turnFailed(error.code, error.message, undefined, error.context)
          : turnFailed("model_error", error instanceof Error ? error.message : String(error));
      if (!(error instanceof ModelError))
        deps.logger.warn({ session_id: session.id, err: error }, "model call failed");
      await deps.append([failure], "idle");
      return "failed";
    }
    if (signal.aborted) return "interrupted";
    // a compaction before the call was made for this turn: its tokens are the turn's too
    const compacted = deps.context.takeCompactionUsage();
    at.usage.input_tokens += reply.usage.input_tokens + compacted.input_tokens;
    at.usage.output_tokens += reply.usage.output_tokens + compacted.output_tokens;
    if (reply.tool_calls.length > MAX_TOOL_CALLS_PER_STEP) {
      const message = `the model asked for ${reply.tool_calls.length} tool calls in one step; at most ${MAX_TOOL_CALLS_PER_STEP} are sent at once, so none was`;
      await deps.append([turnFailed("too_many_tool_calls", message)], "idle");
      return "failed";
    }

    const calls: ToolCall[] = packedMap(reply.tool_calls, (call) =>
      madeToolCall(newId("call"), call.name, call.arguments, call.provider_call_id),
    );
    const assistant: NewEvent = {
      type: "message.assistant",
      data: { text: reply.text, tool_calls: calls, stop_reason: reply.stop_reason, usage: reply.usage },
    };
    if (calls.length === 0) {
      await deps.append(
        [
          assistant,
          { type: "turn.completed", data: { stop_reason: reply.stop_reason, steps: step, usage: at.usage } },
        ],
        "idle",
      );
      return "completed";
    }
    // a call that needs a person waits for the answer from the moment it is stored: the turn listens first
    const asking = calls.filter((call) => needsApproval(deps, call));
    const events: NewEvent[] = [assistant];
    for (const { call_id, name, arguments: args } of calls)
      events.push({ type: "tool.call", data: { call_id, name, arguments: args } });
    let requested: ReadonlyMap<string, string> = NONE;
    if (asking.length > 0) {
      await approvals.watch();
      const expiresAt = new Date(Date.now() + deps.approvalTimeoutMs).toISOString();
      for (const { call_id, name, arguments: args } of asking) {
        events.push({
          type: "tool.approval_requested",
          data: { call_id, name, arguments: args, expires_at: expiresAt },
        });
      }
      requested = new Map(asking.map((call) => [call.call_id, expiresAt]));
    }
    // the calls are stored before any request goes out, so a crash from here on leaves a trace
    await deps.append(events);
    return { step, usage: at.usage, text: reply.text, calls, results: NONE, requested, answers: NONE };
  }
}

/** Whether a call waits for a person: its binding says so, and its arguments are valid to send. */
function needsApproval(deps: TurnDeps, call: ToolCall): boolean {
  const binding = deps.tools.get(call.name);
  return binding?.approval === true && binding.validateArguments(call.arguments) === true;
}

/** The turn's ApprovalWatch, opened the first time a call needs one. */
class LazyApprovals {
  #watch: Promise<ApprovalWatch> | undefined;

  constructor(private readonly deps: TurnDeps) {}

  watch(): Promise<ApprovalWatch> {
    this.#watch ??= this.deps.approvals();
    return this.#watch;
  }

  close(): void {
    this.#watch?.then((watch) => watch.close()).catch(() => undefined);
  }
}

/**
 * Every call of a step to its result: those the log already answered as they were, the others sent
 * concurrently (after their approval, where they need one), each result stored as it comes.
 */
async function runCalls(
  turn: Turn,
  deps: TurnDeps,
  step: OpenStep,
  approvals: LazyApprovals,
): Promise<ToolResultEventData[]> {
  // a step of one call, the most common, has nothing beside it to wait for: awaited alone, it
  // spares Promise.allSettled's outcome objects, which V8 builds through its slow path (BENCHMARKS.md)
  const only = step.calls.length === 1 ? step.calls[0] : undefined;
  if (only) return [await resultOf(turn, deps, step, only, approvals)];
  // every call runs to its end even if another's result cannot be stored, so when a turn
  // fails nothing of it is still running to write a second result
  const settled = await Promise.allSettled(
    step.calls.map((call) => resultOf(turn, deps, step, call, approvals)),
  );
  return packedMap(settled, (outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
}

/** One call's result: the log's, else a refusal, else the tool's answer. */
async function resultOf(
  turn: Turn,
  deps: TurnDeps,
  step: OpenStep,
  call: ToolCall,
  approvals: LazyApprovals,
): Promise<ToolResultEventData> {
  const known = step.results.get(call.call_id);
  if (known) return known;
  const expiresAt = step.requested.get(call.call_id);
  if (expiresAt !== undefined) {
    const answer = step.answers.get(call.call_id) ?? (await answerOf(turn, deps, call, expiresAt, approvals));
    // Brain stopping, or another owner taking the turn, is no answer: the call waits on for the next owner
    if (!answer && LEFT_WAITING.has(turn.signal.reason)) throw new TurnLeftWaiting(turn.session.id);
    if (answer?.decision !== "approve") return refused(deps, call, answer);
  }
  return callTool(turn, deps, call);
}

/**
 * A person's answer to a call, or the expiry Brain records when nobody answered in time; undefined
 * when the turn stopped first.
 */
async function answerOf(
  turn: Turn,
  deps: TurnDeps,
  call: ToolCall,
  expiresAt: string,
  approvals: LazyApprovals,
): Promise<ApprovalAnswer | undefined> {
  const watch = await approvals.watch();
  const expiry = setTimeout(
    () => {
      deps.expireApproval(call).catch((error: unknown) => {
        deps.logger.warn(
          { session_id: turn.session.id, err: error },
          "could not record an approval's expiry",
        );
      });
    },
    Math.max(0, Date.parse(expiresAt) - Date.now()),
  );
  try {
    return await watch.answerOf(call.call_id, turn.signal);
  } finally {
    clearTimeout(expiry);
  }
}

/** The result of a call that was never sent: denied, expired, or the turn stopped while it waited. */
async function refused(
  deps: TurnDeps,
  call: ToolCall,
  answer: ApprovalAnswer | undefined,
): Promise<ToolResultEventData> {
  const failure = refusalOf(answer);
  const data: ToolResultEventData = {
    call_id: call.call_id,
    name: call.name,
    ...failure.toResult(),
    duration_ms: 0,
  };
  deps.metrics.toolCalls.inc({ tool: deps.tools.get(call.name)?.name ?? "(unknown)", outcome: failure.code });
  await deps.append([{ type: "tool.result", data }]);
  return data;
}

async function callTool(turn: Turn, deps: TurnDeps, call: ToolCall): Promise<ToolResultEventData> {
  const binding = deps.tools.get(call.name);
  const inspection = binding?.inspectSession ? await deps.inspectionFor() : undefined;
  const started = performance.now();
  let result: Awaited<ReturnType<ToolCaller["call"]>>;
  try {
    result = await deps.dispatcher.call({
      tenantId: turn.session.tenant_id,
      sessionId: turn.session.id,
      callId: call.call_id,
      name: call.name,
      arguments: call.arguments,
      argumentsJson: argumentsJson(call),
      binding,
      signal: turn.signal,
      onProgress: (data) =>
        deps.publishLive({ type: "tool.progress", data: { call_id: call.call_id, name: call.name, data } }),
      ...(inspection && { inspection: { token: inspection.token, brainUrl: inspection.brainUrl } }),
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
