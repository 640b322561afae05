import type { StoredEvent } from "../../protocol/events.js";
import { RECORDED_END_STOP_REASON, type RecordedEvent } from "./recording.js";

/** An event as a replay must reproduce it: without the ids, times and durations that differ on every run. */
export interface ComparableEvent {
  type: string;
  data: unknown;
}

export interface ReplayDifference {
  /** Position among the turns' events. */
  index: number;
  recorded: ComparableEvent | undefined;
  replayed: ComparableEvent | undefined;
}

// a replay is another session: its creation differs by design, and it is left open
const SESSION_EVENTS = new Set(["session.created", "session.closed"]);

/** The events of the session's turns, made comparable. */
export function comparableEvents(events: readonly RecordedEvent[]): ComparableEvent[] {
  return events
    .filter((event) => !SESSION_EVENTS.has(event.type))
    .map(({ type, data }) => ({ type, data: withoutRunIds(data) }));
}

/**
 * Where a replay differs from its recording, event by event within each turn. A recorded turn
 * that failed or was interrupted is compared up to its end, which the replay cannot reproduce:
 * there the replay ends the turn with the recording's empty answer instead.
 */
export function compareReplay(
  recorded: readonly RecordedEvent[],
  replayed: readonly StoredEvent[],
): ReplayDifference[] {
  const before = turnsOf(comparableEvents(recorded));
  const after = turnsOf(comparableEvents(replayed));
  const differences: ReplayDifference[] = [];
  for (let turn = 0; turn < Math.max(before.length, after.length); turn++) {
    let a = before[turn] ?? [];
    let b = after[turn] ?? [];
    if (endedEarly(a.at(-1)?.event) && isRecordedEnd(b.slice(-2).map((entry) => entry.event))) {
      a = a.slice(0, -1);
      b = b.slice(0, -2);
    }
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const [x, y] = [a[i], b[i]];
      if (canonical(x?.event) !== canonical(y?.event)) {
        differences.push({ index: (x ?? y)?.index ?? 0, recorded: x?.event, replayed: y?.event });
      }
    }
  }
  return differences;
}

interface Positioned {
  index: number;
  event: ComparableEvent;
}

/** The events split into turns, each starting at its `message.user`, with their positions. */
function turnsOf(events: readonly ComparableEvent[]): Positioned[][] {
  const turns: Positioned[][] = [];
  for (const [index, event] of events.entries()) {
    if (event.type === "message.user" || turns.length === 0) turns.push([]);
    turns.at(-1)?.push({ index, event });
  }
  return turns;
}

const endedEarly = (event: ComparableEvent | undefined) =>
  event?.type === "turn.failed" || event?.type === "turn.interrupted";

/** The empty answer and completion the recording's end step makes in a replay. */
function isRecordedEnd([answer, end]: ComparableEvent[]): boolean {
  const data = answer?.data as { stop_reason?: unknown } | undefined;
  return (
    answer?.type === "message.assistant" &&
    data?.stop_reason === RECORDED_END_STOP_REASON &&
    end?.type === "turn.completed"
  );
}

// a compaction's counts are the replaying model's tokenizer's, which may not be the recorded one's
const RUN_FIELDS = new Set(["call_id", "provider_call_id", "duration_ms", "tokens_before", "tokens_after"]);

function withoutRunIds(data: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (RUN_FIELDS.has(key)) continue;
    out[key] =
      key === "tool_calls" && Array.isArray(value)
        ? value.map((call) => withoutRunIds(call as Record<string, unknown>))
        : value;
  }
  return out;
}

/** JSON with object keys sorted, so that a service sending the same result in another key order matches. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
