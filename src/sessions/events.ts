import type { ToolCall, Usage } from "../models/provider.js";
import type { ToolResult } from "../tools/result.js";

/** Stored events, in the order a turn writes them. */
export type StoredEventType =
  | "session.created"
  | "message.user"
  | "turn.started"
  | "message.assistant"
  | "tool.call"
  | "tool.result"
  | "turn.completed"
  | "turn.interrupted"
  | "turn.failed"
  | "session.closed";

/** Sent to connected clients only, never stored, carrying no seq. */
export type LiveEventType = "tool.progress" | "model.delta";

export interface StoredEvent {
  seq: number;
  type: StoredEventType;
  at: string;
  data: Record<string, unknown>;
}

export interface LiveEvent {
  type: LiveEventType;
  at: string;
  data: Record<string, unknown>;
}

export type SessionEvent = StoredEvent | LiveEvent;

export interface NewEvent {
  type: StoredEventType;
  data: object;
}

export type ToolCallEventData = ToolCall;
export type ToolResultEventData = ToolResult & { call_id: string; name: string; duration_ms: number };
export interface MessageAssistantData {
  text: string;
  tool_calls: ToolCall[];
  stop_reason: string;
  usage: Usage;
}
export interface TurnCompletedData {
  stop_reason: string;
  steps: number;
  usage: Usage;
}
export interface TurnEndedWithErrorData {
  error: { code: string; message: string };
}
