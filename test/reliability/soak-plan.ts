import type { StoredEvent } from "../../src/client/client.js";
import type { Random } from "./random.js";

/** What Brain must record for a call: "ok", "tool_error" (the service's own error result), or a code of docs/protocol.md. */
export interface Expected {
  code: string;
  unknownOutcome: boolean;
}

export interface PlannedCall {
  tool: string;
  arguments: Record<string, unknown>;
  expected: Expected;
}

/** A turn: steps of concurrent calls; "interrupted" turns end in a call that only an interrupt ends. */
export interface PlannedTurn {
  steps: PlannedCall[][];
  end: "completed" | "interrupted";
}

/** The scripted model's steps for a session's turns, in the order it plays them. */
export function scriptFor(turns: readonly PlannedTurn[]) {
  return turns.flatMap((turn) => [
    ...turn.steps.map((calls) => ({
      tool_calls: calls.map((call) => ({ name: call.tool, arguments: call.arguments })),
    })),
    ...(turn.end === "completed" ? [{ text: "turn done" }] : []),
  ]);
}

/**
 * A random session: `turns` turns of one or two steps, each step one to three calls drawn from
 * `faults`; with `interrupt`, the last turn ends in `hang`, which the soak interrupts.
 */
export function planSession(
  random: Random,
  faults: readonly PlannedCall[],
  hang: PlannedCall,
  turns: number,
  interrupt: boolean,
): PlannedTurn[] {
  return Array.from({ length: turns }, (_, i) => {
    const steps = Array.from({ length: 1 + random.int(2) }, () =>
      Array.from({ length: 1 + random.int(3) }, () => random.pick(faults)),
    );
    if (interrupt && i === turns - 1) return { steps: [...steps, [hang]], end: "interrupted" as const };
    return { steps, end: "completed" as const };
  });
}

/** Outcomes of calls Brain never sends: the service must not see them. */
const NOT_SENT = new Set(["invalid_arguments", "unknown_tool", "unreachable"]);

/**
 * Everything wrong with a session's stored log against its plan: seq must be gapless, each planned
 * call must have its tool.call and exactly one tool.result with the expected outcome, the service
 * must have received each call sent exactly once (`timesReceived`), and each turn must end as planned.
 */
export function checkSession(
  events: readonly StoredEvent[],
  turns: readonly PlannedTurn[],
  timesReceived: (callId: string) => number,
): string[] {
  const problems: string[] = [];
  events.forEach((event, i) => {
    if (event.seq !== i + 1) problems.push(`seq gap: event ${i} has seq ${event.seq}`);
  });
  const planned = turns.flatMap((turn) => turn.steps.flat());
  const calls = events.filter((event) => event.type === "tool.call");
  if (calls.length !== planned.length)
    problems.push(`${calls.length} tool.call events for ${planned.length} calls`);
  const results = new Map<string, StoredEvent[]>();
  for (const event of events.filter((e) => e.type === "tool.result")) {
    const id = String(event.data.call_id);
    results.set(id, [...(results.get(id) ?? []), event]);
  }
  for (const [i, call] of calls.entries()) {
    const id = String(call.data.call_id);
    const expected = planned[i]?.expected;
    const answers = results.get(id) ?? [];
    results.delete(id);
    if (answers.length !== 1) {
      problems.push(`${call.data.name} ${id}: ${answers.length} tool.result events`);
      continue;
    }
    if (!expected) continue;
    const received = timesReceived(id);
    if (received !== (NOT_SENT.has(expected.code) ? 0 : 1)) {
      problems.push(`${call.data.name} ${id}: the service received it ${received} times`);
    }
    const data = answers[0]?.data as {
      is_error: boolean;
      unknown_outcome?: boolean;
      error?: { code: string };
    };
    const code = data.error?.code ?? (data.is_error ? "tool_error" : "ok");
    if (code !== expected.code) problems.push(`${call.data.name}: ${code}, expected ${expected.code}`);
    if (data.error && data.unknown_outcome !== expected.unknownOutcome) {
      problems.push(
        `${call.data.name}: unknown_outcome ${data.unknown_outcome}, expected ${expected.unknownOutcome}`,
      );
    }
  }
  for (const id of results.keys()) problems.push(`a tool.result for ${id}, which has no tool.call`);
  const ends = events
    .filter((e) => e.type.startsWith("turn.") && e.type !== "turn.started")
    .map((e) => e.type);
  const plannedEnds = turns.map((turn) => `turn.${turn.end}`);
  if (ends.join() !== plannedEnds.join())
    problems.push(`turns ended ${ends.join()}, planned ${plannedEnds.join()}`);
  return problems;
}
