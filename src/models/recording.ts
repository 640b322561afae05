import { type Static, Type } from "@sinclair/typebox";
import { type MessageAssistantData, type StoredEvent, StoredEventSchema } from "../../protocol/events.js";
import { type ScriptedCompaction, type ScriptedStep, ScriptSchema } from "../../protocol/script.js";
import { type SessionConfig, SessionConfigInputSchema } from "../../protocol/session.js";
import { check, compile } from "../../protocol/validation.js";

/** A stored event as a recording needs it: its seq and time are the recorded Brain's own. */
export type RecordedEvent = StoredEvent extends infer Event
  ? Event extends StoredEvent
    ? Pick<Event, "type" | "data">
    : never
  : never;

/** A stored session as the scripted model can play it back. */
export interface Recording {
  /** One step per model call that answered, in order: a `scripted` model's script. */
  script: ScriptedStep[];
  /** The user messages, in order: send them to a session with the script to replay it. */
  messages: string[];
  /** What a replay will not reproduce, for people. */
  notes: string[];
}

const TEMPLATE = /\{\{(message|result)\}\}/;

/**
 * The stop reason of the step a recording puts where a turn failed or was interrupted: the
 * replayed turn ends there with an empty answer, and the next turn plays its own steps.
 */
export const RECORDED_END_STOP_REASON = "recorded_turn_ended";

/**
 * Record a session's model steps from its events: text, tool calls (with their arguments as the
 * model gave them), stop reason and usage, so that the scripted model replays the same
 * conversation against the tools as they are now — without a key or a network.
 */
export function recordSession(events: readonly RecordedEvent[]): Recording {
  const script: ScriptedStep[] = [];
  const messages: string[] = [];
  const notes: string[] = [];
  // a compaction comes before the model call of the step it made room for
  let compaction: ScriptedCompaction | undefined;
  const push = (step: ScriptedStep) => {
    script.push(compaction === undefined ? step : { ...step, compaction });
    compaction = undefined;
  };
  for (const event of events) {
    if (event.type === "context.compacted") {
      const { strategy, summary, through_seq, usage } = event.data;
      compaction = { strategy, summary, through_seq, usage };
    }
    if (event.type === "message.user") messages.push(event.data.content);
    if (event.type === "message.assistant") {
      const data = event.data;
      push(stepOf(data));
      if (TEMPLATE.test(JSON.stringify([data.text, data.tool_calls]))) {
        notes.push(
          `step ${script.length} contains {{message}} or {{result}}: the scripted model fills them in when it replays`,
        );
      }
    }
    if (event.type === "turn.failed" || event.type === "turn.interrupted") {
      // The scripted model picks its step by the number of answers so far, and the model call
      // that failed (or never came) left none: without this step the next turn would play it.
      push({ stop_reason: RECORDED_END_STOP_REASON });
      const how = event.type === "turn.failed" ? `failed (${event.data.error.code})` : "was interrupted";
      notes.push(
        `turn ${messages.length} ${how}: a replay ends it there with an empty answer (step ${script.length})`,
      );
    }
  }
  return { script, messages, notes };
}

function stepOf(data: MessageAssistantData): ScriptedStep {
  const calls = data.tool_calls.map((call) => ({ name: call.name, arguments: call.arguments }));
  const usual = calls.length > 0 ? "tool_use" : "end_turn";
  return {
    ...(data.text !== "" && { text: data.text }),
    ...(calls.length > 0 && { tool_calls: calls }),
    ...(data.stop_reason !== usual && { stop_reason: data.stop_reason }),
    ...((data.usage.input_tokens > 0 || data.usage.output_tokens > 0) && { usage: data.usage }),
  };
}

const strict = { additionalProperties: false } as const;

/**
 * A recorded session in a file of its own, which `brain script --out` writes and `brain replay`
 * plays: everything a replay needs, so it runs on any Brain with a scripted model and the same
 * tools — not only on the one whose store holds the session.
 */
export const RecordingFileSchema = Type.Object(
  {
    brain_recording: Type.Literal(1, { description: "The version of this file's format." }),
    session_id: Type.String({ minLength: 1, description: "The recorded session, on the Brain it ran on." }),
    config: Type.Pick(SessionConfigInputSchema, ["tools", "system", "max_steps"]),
    messages: Type.Array(Type.String({ minLength: 1 }), { description: "The user messages, in order." }),
    script: ScriptSchema,
    events: Type.Array(Type.Pick(StoredEventSchema, ["type", "data"]), {
      description: "The recorded events, which the replay's are compared with.",
    }),
  },
  strict,
);
export type RecordingFile = Static<typeof RecordingFileSchema>;

const validateRecordingFile = compile<RecordingFile>(RecordingFileSchema);

/** The recording file of a session, and the notes on what a replay of it will not reproduce. */
export function recordingFile(
  session: { id: string; config: Pick<SessionConfig, "tools" | "system" | "max_steps"> },
  events: readonly RecordedEvent[],
): { file: RecordingFile; notes: string[] } {
  const { script, messages, notes } = recordSession(events);
  const { tools, system, max_steps } = session.config;
  return {
    file: {
      brain_recording: 1,
      session_id: session.id,
      config: { tools, ...(system !== undefined && { system }), max_steps },
      messages,
      script,
      // each event's type and data, as they were (TypeScript does not see that they stay paired)
      events: events.map((event) => ({ type: event.type, data: event.data }) as RecordedEvent),
    },
    notes,
  };
}

/** Read a recording file's text: the recording, or one problem per line, each naming its field. */
export function parseRecordingFile(
  text: string,
): { ok: true; value: RecordingFile } | { ok: false; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  return check(validateRecordingFile, value);
}
