import type { StoredEvent } from "../sessions/events.js";

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
export function comparableEvents(events: readonly StoredEvent[]): ComparableEvent[] {
  return events
    .filter((event) => !SESSION_EVENTS.has(event.type))
    .map(({ type, data }) => ({ type, data: withoutRunIds(data) }));
}

/** Where a replay differs from its recording, event by event. */
export function compareReplay(
  recorded: readonly StoredEvent[],
  replayed: readonly StoredEvent[],
): ReplayDifference[] {
  const before = comparableEvents(recorded);
  const after = comparableEvents(replayed);
  const differences: ReplayDifference[] = [];
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    const [a, b] = [before[index], after[index]];
    if (canonical(a) !== canonical(b)) differences.push({ index, recorded: a, replayed: b });
  }
  return differences;
}

const RUN_FIELDS = new Set(["call_id", "provider_call_id", "duration_ms"]);

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
