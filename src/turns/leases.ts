import type { Logger } from "../telemetry/logger.js";

/**
 * A running turn's ownership. The owner runs the turn and is the only one to write to it; a
 * stop asked anywhere reaches it through its lease.
 */
export interface TurnLease {
  readonly sessionId: string;
  /** Fires when someone asks the turn to stop (the reason is the signal's), or the lease is lost. */
  readonly signal: AbortSignal;
  /**
   * Where a lease can be lost (many instances), the fencing token the turn's appends carry: the
   * store refuses them once another owner has the turn.
   */
  readonly token?: number;
  /**
   * Where a lease can be lost, log what befalls it (lost, not released) on `logger` from now on:
   * the running turn's, with its trace ids. Each turn the lease runs calls it.
   */
  logUnder?(logger: Logger): void;
  /** The turn has ended and recorded its end: give the session up, and wake whoever waits on it. */
  release(): void;
}

/** The abort reason of the turns a stopping Brain interrupts. */
export const SHUTDOWN = "shutdown";

/** The abort reason of a lease that was lost (another owner may have the turn now). */
export const LEASE_LOST = "lease_lost";

/** How a stop went: the owner ended the turn, there was no owner, or it did not end in time. */
export type StopOutcome = "ended" | "no_owner" | "still_running";

/**
 * Who owns the running turn of each session: the seam between one Brain process and many. Taking a
 * lease comes before a turn starts, so a session marked running always has an owner unless that
 * owner is gone (it crashed, or could not record the turn's end); such turns are found with
 * `ownerless` and ended by whoever finds them.
 */
export interface TurnLeases {
  /** Own the session's next turn; undefined while someone else owns one there. */
  acquire(sessionId: string): Promise<TurnLease | undefined>;
  /** Ask the owner of the session's turn to stop it, and wait at most `waitMs` for it to end. */
  stop(sessionId: string, reason: string, waitMs: number): Promise<StopOutcome>;
  /** Of these sessions (marked running), the ones whose turn has no live owner. */
  ownerless(sessionIds: readonly string[]): Promise<string[]>;
  /** Leases this process holds. */
  held(): number;
  /** Ask every turn this process owns to stop, and wait until each has ended. */
  stopAll(reason: string): Promise<void>;
}

/** "ended" once `ended` settles, "still_running" if it has not after `waitMs`. */
export async function waitForEnd(ended: Promise<void>, waitMs: number): Promise<"ended" | "still_running"> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"still_running">((resolve) => {
    timer = setTimeout(() => resolve("still_running"), waitMs);
  });
  try {
    return await Promise.race([ended.then(() => "ended" as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
