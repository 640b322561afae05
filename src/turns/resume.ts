import type { StoredEvent, ToolResultEventData } from "../../protocol/events.js";
import type { ContextHistory, ContextMeasure } from "../context/history.js";
import type { Usage } from "../models/provider.js";
import { lastStep, waitingCalls } from "./approvals.js";
import { ConversationFold } from "./conversation.js";
import type { OpenStep } from "./turn.js";

/** A turn a stopped owner left waiting for approval, as the log has it. */
export interface WaitingTurn {
  /** The conversation before the open step. */
  history: ContextHistory;
  open: OpenStep;
  /**
   * The step's calls without a result that may have been sent (no approval needed, or approved):
   * nobody can know what they did, so they end `brain_restarted` before the turn goes on.
   */
  maybeSent: { call_id: string; name: string }[];
}

/**
 * The running turn at the end of `events`, if some of its last step's calls still wait for a
 * person: such a turn is picked up where it stands rather than ended, so the answer still counts.
 * Pure.
 */
export function waitingTurn(
  events: readonly StoredEvent[],
  measure: ContextMeasure,
): WaitingTurn | undefined {
  const step = lastStep(events);
  if (!step || waitingCalls(step).length === 0) return undefined;
  const fold = new ConversationFold(measure);
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  let steps = 0;
  for (const event of events) {
    if (event.seq < step.assistant.seq) fold.push(event);
    if (event.type === "turn.started") {
      steps = 0;
      usage.input_tokens = 0;
      usage.output_tokens = 0;
    } else if (event.type === "message.assistant") {
      steps++;
      usage.input_tokens += event.data.usage.input_tokens;
      usage.output_tokens += event.data.usage.output_tokens;
    } else if (event.type === "context.compacted") {
      // counted with the turn's model calls, as the turn that made it counted it
      usage.input_tokens += event.data.usage.input_tokens;
      usage.output_tokens += event.data.usage.output_tokens;
    }
  }
  const calls = step.assistant.data.tool_calls;
  const maybeSent = calls
    .filter(
      ({ call_id }) =>
        !step.results.has(call_id) &&
        (!step.requested.has(call_id) || step.answers.get(call_id)?.decision === "approve"),
    )
    .map(({ call_id, name }) => ({ call_id, name }));
  return {
    history: fold.history(),
    open: {
      step: steps,
      usage,
      text: step.assistant.data.text,
      calls,
      results: new Map<string, ToolResultEventData>(step.results),
      requested: step.requested,
      answers: step.answers,
    },
    maybeSent,
  };
}
