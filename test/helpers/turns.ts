import {
  BrainApiError,
  type BrainClient,
  type SessionEvent,
  type StoredEvent,
} from "../../src/client/client.js";

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.interrupted"]);

/**
 * Send a message and collect every event, live ones included, until the turn ends. The message is
 * sent once the stream is open, so nothing is missed.
 */
export async function runTurn(
  client: BrainClient,
  sessionId: string,
  content: string,
  timeoutMs = 10_000,
): Promise<SessionEvent[]> {
  // the last stored seq, paging on: a long session holds more events than one page
  let after = 0;
  for (
    let page = await client.events(sessionId);
    page.length > 0;
    page = await client.events(sessionId, { after })
  )
    after = page.at(-1)?.seq ?? after;
  const signal = AbortSignal.timeout(timeoutMs);
  const events: SessionEvent[] = [];
  // the message goes once Brain has the stream open: a live-only event sent before would be missed
  let open = () => {};
  const connected = new Promise<void>((resolve) => {
    open = resolve;
  });
  const onStatus = (status: { state: string }) => status.state === "connected" && open();
  const stream = client.streamEvents(sessionId, { after, signal, onStatus });
  const first = stream.next();
  // a stream that fails to open fails the turn with its error
  await Promise.race([connected, first]);
  await client.sendMessage(sessionId, content);
  let next = await first;
  while (!next.done) {
    events.push(next.value);
    if (TURN_ENDS.has(next.value.type)) {
      await stream.return(undefined);
      return events;
    }
    next = await stream.next();
  }
  throw new Error(
    `the turn did not end within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(", ")}`,
  );
}

/** The events of one type, typed as that type's. */
export function ofType<T extends SessionEvent["type"]>(
  events: readonly SessionEvent[],
  type: T,
): Extract<SessionEvent, { type: T }>[] {
  return events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);
}

export function storedOnly(events: readonly SessionEvent[]): StoredEvent[] {
  return events.filter((event): event is StoredEvent => "seq" in event);
}

/** Poll until `predicate` holds for the stored events, or fail after `timeoutMs`. */
export async function waitForEvents(
  client: BrainClient,
  sessionId: string,
  predicate: (events: StoredEvent[]) => boolean,
  timeoutMs = 10_000,
): Promise<StoredEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await client.events(sessionId);
    if (predicate(events)) return events;
    if (Date.now() > deadline)
      throw new Error(`condition not met; events: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function assertGapless(events: readonly StoredEvent[]): void {
  events.forEach((event, i) => {
    if (event.seq !== i + 1) throw new Error(`seq gap: event ${i} has seq ${event.seq}`);
  });
}

/** The BrainApiError a request is refused with; fails the test if it was not refused. */
export async function refusal(promise: Promise<unknown>): Promise<BrainApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BrainApiError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}
