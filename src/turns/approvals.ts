import type { EventData, StoredEvent } from "../../protocol/events.js";
import type { EventBus, Subscription } from "../events/bus.js";
import { ToolFailure } from "../tools/outcome.js";

export type ApprovalAnswer = EventData<"tool.approval">;

/**
 * The answers to one turn's calls that wait for approval, as they are stored: from whichever
 * instance took them, they reach the turn through the event bus. A turn opens one before it asks
 * for any approval, so that no answer can come before it listens.
 */
export class ApprovalWatch {
  readonly #answers = new Map<string, ApprovalAnswer>();
  readonly #waiting = new Map<string, (answer: ApprovalAnswer) => void>();
  #subscription: Subscription | undefined;

  private constructor() {}

  static async open(
    bus: EventBus,
    sessionId: string,
    known: Iterable<ApprovalAnswer> = [],
  ): Promise<ApprovalWatch> {
    const watch = new ApprovalWatch();
    for (const answer of known) watch.#answers.set(answer.call_id, answer);
    watch.#subscription = await bus.subscribe(sessionId, (event) => {
      if ("seq" in event) watch.#stored(event);
    });
    return watch;
  }

  /** The call's answer, when it comes; undefined if `signal` fires first. */
  answerOf(callId: string, signal: AbortSignal): Promise<ApprovalAnswer | undefined> {
    const known = this.#answers.get(callId);
    if (known) return Promise.resolve(known);
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#waiting.delete(callId);
        resolve(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(callId, (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      });
    });
  }

  /** The turn has ended: whoever still waits was woken by the turn's signal. */
  close(): void {
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
  }

  #stored(event: StoredEvent): void {
    if (event.type !== "tool.approval") return;
    this.#answers.set(event.data.call_id, event.data);
    const wake = this.#waiting.get(event.data.call_id);
    this.#waiting.delete(event.data.call_id);
    wake?.(event.data);
  }
}

/** Where each call of a turn's last step stands, read from the log. */
export interface StepState {
  /** The step's assistant message, and its seq. */
  assistant: Extract<StoredEvent, { type: "message.assistant" }>;
  results: Map<string, EventData<"tool.result">>;
  /** Calls whose approval was asked for, with when the asking runs out. */
  requested: Map<string, string>;
  answers: Map<string, ApprovalAnswer>;
}

/** The last step of the turn that the log ends in, if that step asked for tools. */
export function lastStep(events: readonly StoredEvent[]): StepState | undefined {
  let state: StepState | undefined;
  for (const event of events) {
    switch (event.type) {
      case "turn.started":
        state = undefined;
        break;
      case "message.assistant":
        state = { assistant: event, results: new Map(), requested: new Map(), answers: new Map() };
        break;
      case "tool.result":
        state?.results.set(event.data.call_id, event.data);
        break;
      case "tool.approval_requested":
        state?.requested.set(event.data.call_id, event.data.expires_at);
        break;
      case "tool.approval":
        state?.answers.set(event.data.call_id, event.data);
        break;
      default:
    }
  }
  return state && state.assistant.data.tool_calls.length > 0 ? state : undefined;
}

/** The calls of a step that still wait for a person: asked, unanswered, without a result. */
export function waitingCalls(step: StepState): string[] {
  return [...step.requested.keys()].filter((id) => !step.answers.has(id) && !step.results.has(id));
}

/**
 * The failure of a call that was never sent because of its approval: denied, expired, or (no
 * answer) stopped while it waited. None of them ran, so none has an unknown outcome.
 */
export function refusalOf(answer: ApprovalAnswer | undefined): ToolFailure {
  if (!answer)
    return ToolFailure.unsent(
      "cancelled",
      "the turn was interrupted or closed while the call waited for approval",
    );
  if (answer.expired)
    return ToolFailure.unsent("approval_expired", "nobody answered the request for approval in time");
  return ToolFailure.unsent("denied", `a person denied the call${answer.reason ? `: ${answer.reason}` : ""}`);
}

/**
 * Where a call of the step stands if its turn ends now without it: the refusal it gets if it was
 * never sent (it waited, or was denied), undefined if it may have been sent.
 */
export function unsentRefusal(step: StepState | undefined, callId: string): ToolFailure | undefined {
  if (!step?.requested.has(callId)) return undefined;
  const answer = step.answers.get(callId);
  return answer?.decision === "approve" ? undefined : refusalOf(answer);
}
