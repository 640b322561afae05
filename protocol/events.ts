import { type Static, type TObject, type TProperties, Type } from "@sinclair/typebox";
import { CONTEXT_STRATEGIES } from "./context.js";
import { ErrorInfoSchema, ToolResultSchema } from "./result.js";
import { APPROVAL_DECISIONS, SessionConfigSchema } from "./session.js";
import type { TurnFailureCode } from "./turn-failures.js";
import { StringEnum } from "./validation.js";

// A session's events: each type's data is a schema of its own, and the event types are derived from
// them, so that a client narrows an event by its `type` and reads typed data.

const Traceparent = Type.String({ pattern: "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" });

const Usage = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() });

export const ToolCallSchema = Type.Object({
  call_id: Type.String(),
  name: Type.String(),
  /** As the model gave them: usually an object, but a model can produce anything. */
  arguments: Type.Unknown(),
  /** The provider's own id for the call, given back to it with the result. */
  provider_call_id: Type.Optional(Type.String()),
});

export const ToolResultDataSchema = Type.Composite([
  Type.Object({ call_id: Type.String(), name: Type.String() }),
  ToolResultSchema,
  Type.Object({ duration_ms: Type.Number() }),
]);

const stored = <T extends string, D extends TProperties>(type: T, data: TObject<D>) =>
  Type.Object({
    seq: Type.Integer({ minimum: 1 }),
    type: Type.Literal(type),
    at: Type.String({ format: "date-time" }),
    data,
  });

const live = <T extends string, D extends TProperties>(type: T, data: TObject<D>) =>
  Type.Object({ type: Type.Literal(type), at: Type.String({ format: "date-time" }), data });

/** Stored events, in the order a turn writes them. */
export const StoredEventSchema = Type.Union([
  stored("session.created", Type.Object({ config: SessionConfigSchema })),
  stored(
    "message.user",
    Type.Object({
      content: Type.String(),
      /** When the message waited in the session's queue: the seq of its `message.queued`. */
      queued_seq: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  /** A message sent with on_busy "enqueue" while a turn ran: its turn starts when the turn before it ends. */
  stored(
    "message.queued",
    Type.Object({
      content: Type.String(),
      /** The W3C traceparent the message came with, which its turn's span goes under. */
      traceparent: Type.Optional(Traceparent),
    }),
  ),
  stored(
    "turn.started",
    Type.Object({
      /**
       * The W3C traceparent of the turn's span, where the turn is in a trace: a turn ended or picked
       * up by another process after a restart or takeover goes on in the same trace.
       */
      traceparent: Type.Optional(Traceparent),
    }),
  ),
  stored(
    "message.assistant",
    Type.Object({
      text: Type.String(),
      tool_calls: Type.Array(ToolCallSchema),
      stop_reason: Type.String(),
      usage: Usage,
    }),
  ),
  stored(
    "tool.call",
    Type.Object({ call_id: Type.String(), name: Type.String(), arguments: Type.Unknown() }),
  ),
  /** A call of a binding with approval "always": nothing is sent until it is answered. */
  stored(
    "tool.approval_requested",
    Type.Object({
      call_id: Type.String(),
      name: Type.String(),
      arguments: Type.Unknown(),
      expires_at: Type.String({ format: "date-time" }),
    }),
  ),
  stored(
    "tool.approval",
    Type.Object({
      call_id: Type.String(),
      decision: StringEnum(APPROVAL_DECISIONS),
      reason: Type.Optional(Type.String()),
      /** Nobody answered in time: a deny Brain made. */
      expired: Type.Optional(Type.Boolean()),
    }),
  ),
  stored("tool.result", ToolResultDataSchema),
  stored("turn.completed", Type.Object({ stop_reason: Type.String(), steps: Type.Integer(), usage: Usage })),
  /**
   * What the model is sent from now on in place of every event up to `through_seq`: a summary the
   * model wrote ("compact"), or a note that those turns were left out ("truncate"). The log keeps
   * every event; only what the model reads changes.
   */
  stored(
    "context.compacted",
    Type.Object({
      strategy: StringEnum(CONTEXT_STRATEGIES),
      summary: Type.String(),
      through_seq: Type.Integer({ minimum: 0 }),
      /** The tokens of the summarising model call (zero for "truncate"). */
      usage: Usage,
      /** The conversation's tokens before and after, as Brain counts them (provider usage, else an estimate). */
      tokens_before: Type.Integer({ minimum: 0 }),
      tokens_after: Type.Integer({ minimum: 0 }),
    }),
  ),
  stored("turn.interrupted", Type.Object({ reason: Type.String() })),
  stored(
    "turn.failed",
    Type.Object({
      error: ErrorInfoSchema,
      /** The tokens the turn used, where its failure is about them (`budget_exhausted`). */
      usage: Type.Optional(Usage),
      /** For `context_exceeded`: the conversation's tokens and the model's window, where known. */
      context: Type.Optional(
        Type.Object({ tokens: Type.Optional(Type.Integer()), context_window: Type.Optional(Type.Integer()) }),
      ),
    }),
  ),
  stored("session.closed", Type.Object({})),
]);

/** Sent to connected clients only, never stored, carrying no seq. */
export const LiveEventSchema = Type.Union([
  live("tool.progress", Type.Object({ call_id: Type.String(), name: Type.String(), data: Type.Unknown() })),
  live("model.delta", Type.Object({ text: Type.String(), attempt: Type.Integer({ minimum: 1 }) })),
]);

export const SessionEventSchema = Type.Union([StoredEventSchema, LiveEventSchema]);

/** A page of stored events, as `GET /sessions/{id}/events` answers in JSON. */
export const EventListSchema = Type.Object({ events: Type.Array(StoredEventSchema) });

export type StoredEvent = Static<typeof StoredEventSchema>;
export type LiveEvent = Static<typeof LiveEventSchema>;
export type SessionEvent = StoredEvent | LiveEvent;
export type StoredEventType = StoredEvent["type"];
export type LiveEventType = LiveEvent["type"];
export type EventType = SessionEvent["type"];

/** The data of events of `type`. */
export type EventData<T extends EventType> = Extract<SessionEvent, { type: T }>["data"];

/** An event to append: its type and data; the store gives it its seq and time. */
export type NewEvent = { [T in StoredEventType]: { type: T; data: EventData<T> } }[StoredEventType];

/** A live-only event to publish: its type and data; it is given its time when published. */
export type NewLiveEvent = { [T in LiveEventType]: { type: T; data: EventData<T> } }[LiveEventType];

const TURN_ENDS: ReadonlySet<string> = new Set<EventType>([
  "turn.completed",
  "turn.failed",
  "turn.interrupted",
]);

/** Whether an event of `type` ends a turn: after it, a message starts a turn of its own. */
export function endsTurn(type: string): boolean {
  return TURN_ENDS.has(type);
}

/** A `turn.failed` to append: every producer names a code of the one enum. */
export function turnFailed(
  code: TurnFailureCode,
  message: string,
  usage?: Usage,
  context?: EventData<"turn.failed">["context"],
): NewEvent {
  return {
    type: "turn.failed",
    data: { error: { code, message }, ...(usage && { usage }), ...(context && { context }) },
  };
}

export type ToolCall = Static<typeof ToolCallSchema>;
export type ToolResultEventData = EventData<"tool.result">;
export type MessageAssistantData = EventData<"message.assistant">;
export type ContextCompactedData = EventData<"context.compacted">;
export type Usage = Static<typeof Usage>;
