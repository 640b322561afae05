import type { EventData, StoredEvent } from "../../protocol/events.js";
import type { EventLog } from "../events/event-log.js";
import { SessionError, sessionClosed } from "../sessions/errors.js";
import { lastStep } from "./approvals.js";

/** How many times an answer is tried while the log keeps growing under it (other calls' results). */
const ATTEMPTS = 20;

/**
 * Store the answer to a call that waits for approval, once: only if the call is waiting in the
 * session's open step (asked, unanswered, without a result) when the answer is written, which the
 * append checks (`expectLastSeq`): of two answers, the second finds the first. A person's answer
 * past the call's expiry is refused; Brain's own record of the expiry is not.
 */
export async function recordApproval(
  log: EventLog,
  readAll: (sessionId: string) => Promise<StoredEvent[]>,
  sessionId: string,
  answer: EventData<"tool.approval">,
): Promise<SessionError | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const events = await readAll(sessionId);
    const step = lastStep(events);
    const expiresAt = step?.requested.get(answer.call_id);
    if (!step || expiresAt === undefined) return notOpen(events, answer.call_id);
    const earlier = step.answers.get(answer.call_id);
    if (earlier) {
      return notWaiting(answer.call_id, earlier.expired ? "its approval expired" : "it was answered already");
    }
    if (step.results.has(answer.call_id)) return notWaiting(answer.call_id, "its turn has ended");
    if (!answer.expired && Date.parse(expiresAt) <= Date.now())
      return notWaiting(answer.call_id, "its approval expired");
    const result = await log.append(sessionId, [{ type: "tool.approval", data: answer }], {
      expectStatus: ["running"],
      expectLastSeq: events.at(-1)?.seq ?? 0,
    });
    if (result.ok) return undefined;
    if (result.status === "closed") return sessionClosed();
    // the turn ended since (an interrupt, say): the call was cancelled
    if (!result.moved) return notWaiting(answer.call_id, "its turn has ended");
  }
  return new SessionError(
    "session_busy",
    "the session's log kept changing while the answer was written; send it again",
  );
}

/** Why a call that is not in the open step cannot be answered: it never asked, or its turn is over. */
function notOpen(events: readonly StoredEvent[], callId: string): SessionError {
  let asked = false;
  let answer: EventData<"tool.approval"> | undefined;
  for (const event of events) {
    if (event.type === "tool.approval_requested" && event.data.call_id === callId) asked = true;
    if (event.type === "tool.approval" && event.data.call_id === callId) answer = event.data;
  }
  if (!asked)
    return new SessionError(
      "not_found",
      `no call ${JSON.stringify(callId)} asked for approval in this session`,
    );
  if (!answer) return notWaiting(callId, "its turn has ended");
  return notWaiting(callId, answer.expired ? "its approval expired" : "it was answered already");
}

function notWaiting(callId: string, why: string): SessionError {
  return new SessionError(
    "call_not_waiting",
    `the call ${JSON.stringify(callId)} is not waiting for approval: ${why}`,
  );
}
