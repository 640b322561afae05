import {
  type EventData,
  endsTurn,
  type NewEvent,
  type StoredEvent,
  turnFailed,
} from "../../protocol/events.js";
import type { ApprovalBody, OnBusy, PostMessageAnswer, SessionStatus } from "../../protocol/session.js";
import type { TurnFailureCode } from "../../protocol/turn-failures.js";
import type { BrainConfig, ToolBinding } from "../config/load.js";
import type { ContextHistory } from "../context/history.js";
import { ContextKeeper } from "../context/keeper.js";
import { contextMeasure } from "../context/measure.js";
import type { EventBus } from "../events/bus.js";
import type { EventLog } from "../events/event-log.js";
import type { ModelProvider } from "../models/provider.js";
import { SessionError, sessionClosed, sessionNotFound } from "../sessions/errors.js";
import type { SessionRecord } from "../sessions/session-record.js";
import { type AppendOptions, type Store, StoreUnavailableError } from "../store/store.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import { parseTraceparent, traceparentOf } from "../telemetry/trace-context.js";
import { type ModelEntryLabels, tracedModel } from "../telemetry/traced-model.js";
import { tracedTools } from "../telemetry/traced-tools.js";
import { inSpan, type Span, type SpanContext, type Tracing } from "../telemetry/tracing.js";
import {
  endTurnSpan,
  startTurnSpan,
  storedTurnSpan,
  type TurnRunEnd,
  turnLogger,
  turnStarted,
} from "../telemetry/turn-trace.js";
import type { ToolDispatcher } from "../tools/dispatch.js";
import { ToolFailure } from "../tools/outcome.js";
import { recordApproval } from "./approval-record.js";
import { ApprovalWatch, lastStep, unsentRefusal } from "./approvals.js";
import { unansweredCalls } from "./conversation.js";
import { Conversations } from "./conversations.js";
import { LEASE_LOST, SHUTDOWN, type TurnLease, type TurnLeases } from "./leases.js";
import { foldQueue, type QueuedMessage } from "./queue.js";
import { waitingTurn } from "./resume.js";
import { type OpenStep, runTurn, TurnLeftWaiting } from "./turn.js";

export interface TurnSupervisorDeps {
  config: BrainConfig;
  store: Store;
  log: EventLog;
  bus: EventBus;
  leases: TurnLeases;
  dispatcher: ToolDispatcher;
  providers: ReadonlyMap<string, ModelProvider>;
  /** A token that reads this session until released, for bindings with inspect_session. */
  inspectionFor: (
    session: SessionRecord,
    leaseToken: number | undefined,
  ) => Promise<{ token: string; brainUrl: string; release: () => void }>;
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing;
  /** How long an interrupt or a close waits for the turn's owner to end it. */
  stopWaitMs: number;
  /** How often to look for turns whose owner is gone, where owners can go while Brain runs. */
  takeoverEveryMs: number | undefined;
}

/** Why a turn ended without finishing, for the results of the calls it left out. */
interface Stranding {
  call: string;
  turn: { code: TurnFailureCode; message: string };
  end: CountedTurnEnd;
}

const OWNER_GONE: Stranding = {
  call: "Brain stopped while the call was out",
  turn: { code: "brain_restarted", message: "Brain stopped during the turn" },
  end: "failed",
};

const PAGE = 1000;

/** How long a message waits for an idle session's lease that a takeover holds for a moment. */
const LEASE_WAIT_MS = 1000;

/** How long a crashed turn keeps trying to record its end while the store is away. */
const CRASH_END_PATIENCE_MS = 60_000;

/** The stop reason of a turn that a message with on_busy "interrupt" replaces. */
const SUPERSEDED = "interrupted by a new message";

/** How many times a message tries to start its turn or join the queue while turns start and end under it. */
const MESSAGE_ATTEMPTS = 5;

/** Where a turn starts from: the seq of its `turn.started` and what it knows of the session then. */
interface TurnStart {
  startedAt: number;
  /** The events the turn's start stored, through `startedAt`, when this process stored them. */
  started?: readonly StoredEvent[];
  /** The turn's span in this process, named by its `turn.started` (or the first one's). */
  span: Span;
  /** The session's queue as of `startedAt`. */
  queue: QueuedMessage[];
  /** A turn picked up while its calls wait for approval. */
  resume?: { history: ContextHistory; open: OpenStep; watch: ApprovalWatch };
}

/**
 * What a turn has appended, so that its end knows whether anyone else appended meanwhile (an
 * answer, a queued message) without reading the log when nobody did.
 */
interface TurnTally {
  /** The last seq the turn knows of the log. */
  base: number;
  /** Events the turn appended after `base`, and the highest seq among them. */
  own: number;
  highest: number;
  queue: QueuedMessage[];
}

/**
 * The turns of every session: starting one for a message (or queueing the message), running it
 * under a lease, answering its calls that wait for approval, stopping it (through its owner,
 * wherever that is), and picking up or ending the turns whose owner is gone.
 */
export class TurnSupervisor {
  readonly #conversations: Conversations;
  /** Each tenant's max_concurrent_turns, where it has one. */
  readonly #turnLimits = new Map<string, number>();
  #stopping = false;
  #takeover: NodeJS.Timeout | undefined;

  constructor(private readonly deps: TurnSupervisorDeps) {
    this.#conversations = new Conversations(deps.store);
    for (const tenant of deps.config.tenants)
      if (tenant.maxConcurrentTurns !== undefined) this.#turnLimits.set(tenant.id, tenant.maxConcurrentTurns);
  }

  /**
   * Store the message and start its turn; while a turn runs, refuse it, queue it for a turn of its
   * own, or interrupt the running turn first, as `onBusy` says. The lease is taken first, so that a
   * session marked running always has an owner that a stop can reach.
   */
  async postMessage(
    session: SessionRecord,
    content: string,
    trace?: SpanContext,
    onBusy: OnBusy = "reject",
  ): Promise<PostMessageAnswer | SessionError> {
    if (this.#stopping)
      return new SessionError("session_busy", "Brain is shutting down; send the message again later");
    let queue: QueuedMessage[] = [];
    for (let attempt = 0; attempt < MESSAGE_ATTEMPTS; attempt++) {
      const started = await this.#start(session, content, trace, queue);
      if (started !== "busy" || onBusy === "reject") return started === "busy" ? busy() : started;
      if (onBusy === "interrupt") {
        const stopped = await this.stop({ ...session, status: "running" }, SUPERSEDED);
        if (stopped instanceof SessionError) return stopped;
        // the messages queued before this one still get their turns, after it
        queue = foldQueue([], await this.#readAll(session.id));
        continue;
      }
      const queued = await this.#enqueue(session.id, content, trace);
      if (queued !== "idle") return queued;
    }
    return busy();
  }

  /**
   * A person's answer to a call that waits for approval. It is stored once, bound to the call;
   * the turn's owner, wherever it runs, sends the call or gives it its refusal.
   */
  async answerApproval(
    session: SessionRecord,
    callId: string,
    answer: ApprovalBody,
  ): Promise<EventData<"tool.approval"> | SessionError> {
    if (session.status === "closed") return sessionClosed();
    const data: EventData<"tool.approval"> = {
      call_id: callId,
      decision: answer.decision,
      ...(answer.reason !== undefined && { reason: answer.reason }),
    };
    const refused = await recordApproval(this.deps.log, (id) => this.#readAll(id), session.id, data);
    return refused ?? data;
  }

  /**
   * Stop the session's running turn and wait until it has ended: its owner ends it, or, when it has
   * none, this ends it as a restart would. "none" when no turn was running.
   */
  async stop(session: SessionRecord, reason: string): Promise<"stopped" | "none" | SessionError> {
    if (session.status !== "running") return "none";
    const outcome = await this.deps.leases.stop(session.id, reason, this.deps.stopWaitMs);
    if (outcome === "still_running") {
      return new SessionError(
        "session_busy",
        `the turn was asked to stop and has not ended within ${this.deps.stopWaitMs / 1000} s; try again`,
      );
    }
    if (outcome === "no_owner") await this.#endOwnerless(session.id, reason);
    return "stopped";
  }

  /** Drop the session's kept conversation: it is closed. */
  forgetConversation(sessionId: string): void {
    this.#conversations.forget(sessionId);
  }

  async interrupt(session: SessionRecord): Promise<SessionError | undefined> {
    if (session.status === "closed") return sessionClosed();
    const stopped = await this.stop(session, "interrupted");
    if (stopped === "none") return new SessionError("no_turn_running", "no turn is running in this session");
    return stopped instanceof SessionError ? stopped : undefined;
  }

  /**
   * Take up what a stopped Brain left running: a turn whose calls wait for approval goes on waiting
   * under this process; any other ends, every unanswered tool call with a `brain_restarted` result
   * and the turn marked failed, so each `tool.call` still has exactly one result.
   */
  async recover(): Promise<number> {
    const running = await this.deps.store.sessionsWithStatus("running");
    const ownerless = await this.deps.leases.ownerless(running.map((session) => session.id));
    for (const sessionId of ownerless) await this.#endOwnerless(sessionId);
    return ownerless.length;
  }

  /**
   * Where an owner can go while Brain runs (another instance killed), look for its turns every
   * `takeoverEveryMs` and take them up.
   */
  watchForOwnerlessTurns(): void {
    const every = this.deps.takeoverEveryMs;
    if (every === undefined || this.#takeover) return;
    let looking = false;
    this.#takeover = setInterval(async () => {
      if (looking || this.#stopping) return;
      looking = true;
      try {
        const ended = await this.recover();
        if (ended > 0) this.deps.logger.warn({ sessions: ended }, "took over turns whose owner was gone");
      } catch (error) {
        this.deps.logger.warn({ err: error }, "could not look for turns whose owner was gone");
      } finally {
        looking = false;
      }
    }, every);
    this.#takeover.unref();
  }

  /**
   * Interrupt every turn this process runs and wait for each to record its end; a turn whose calls
   * wait for approval is left waiting, for the next start (or another instance) to pick up.
   */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#takeover);
    await this.deps.leases.stopAll(SHUTDOWN);
  }

  runningTurns(): number {
    return this.deps.leases.held();
  }

  /** Store the message and start its turn if the session is idle; "busy" if a turn runs. */
  async #start(
    session: SessionRecord,
    content: string,
    trace: SpanContext | undefined,
    queue: QueuedMessage[],
  ): Promise<{ seq: number } | SessionError | "busy"> {
    const lease = await this.#leaseForMessage(session);
    if (!lease) return "busy";
    // a span that is never ended (the append refused) is never exported
    const span = startTurnSpan(this.deps.tracing, session.id, trace);
    // the tenant's max_concurrent_turns is counted by the store as it starts the turn, so it holds
    // across instances and for messages that arrive at once
    const tenantTurnLimit = this.#turnLimits.get(session.tenant_id);
    const appended = await this.#append(
      session.id,
      [{ type: "message.user", data: { content } }, turnStarted(span)],
      {
        expectStatus: ["idle"],
        setStatus: "running",
        ...fenced(lease),
        ...(tenantTurnLimit !== undefined && { tenantTurnLimit }),
      },
    ).catch((error: unknown) => {
      lease.release();
      throw error;
    });
    if (appended instanceof SessionError) {
      lease.release();
      if (appended.code === "too_many_turns")
        this.deps.metrics.tenantLimited.inc({ tenant: session.tenant_id, limit: "max_concurrent_turns" });
      return appended.code === "session_busy" ? "busy" : appended;
    }
    this.#run(session, lease, { startedAt: appended.at(-1)?.seq ?? 0, started: appended, span, queue });
    return { seq: appended[0]?.seq ?? 0 };
  }

  /**
   * Put the message in the running turn's queue, if there is room. "idle" when the turn ended
   * meanwhile, so the message can start its own.
   */
  async #enqueue(
    sessionId: string,
    content: string,
    trace: SpanContext | undefined,
  ): Promise<{ queued: number } | SessionError | "idle"> {
    const traceparent = trace && traceparentOf(trace);
    const room = this.deps.config.limits.max_queued_messages;
    for (let attempt = 0; attempt < MESSAGE_ATTEMPTS; attempt++) {
      const events = await this.#readAll(sessionId);
      const waiting = foldQueue([], events).length;
      if (waiting >= room) {
        return new SessionError(
          "queue_full",
          `the session already holds ${waiting} queued messages (limits.max_queued_messages); wait for its turns to end`,
        );
      }
      // the queue's length is known only if nothing was appended since it was read
      const queued: NewEvent = {
        type: "message.queued",
        data: { content, ...(traceparent && { traceparent }) },
      };
      const result = await this.deps.log.append(sessionId, [queued], {
        expectStatus: ["running"],
        expectLastSeq: events.at(-1)?.seq ?? 0,
      });
      if (result.ok) return { queued: waiting + 1 };
      if (result.status === undefined) return sessionNotFound(sessionId);
      if (result.status === "closed") return sessionClosed();
      if (result.status === "idle") return "idle";
    }
    return busy();
  }

  /**
   * The lease for a message's turn. An idle session's lease may be held for a moment by a takeover
   * that found its turn just as it ended: that is waited out, briefly, rather than answered as busy.
   */
  async #leaseForMessage(session: SessionRecord): Promise<TurnLease | undefined> {
    const giveUpAt = Date.now() + LEASE_WAIT_MS;
    for (;;) {
      const lease = await this.deps.leases.acquire(session.id);
      if (lease || Date.now() >= giveUpAt) return lease;
      if ((await this.deps.store.getSession(session.id))?.status !== "idle") return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Take up a turn that has no owner, under a lease of its own so that nobody else does too: it
   * goes on if its calls wait for approval (unless it is being stopped), else it ends.
   */
  async #endOwnerless(sessionId: string, stopping?: string): Promise<void> {
    const lease = await this.deps.leases.acquire(sessionId);
    if (!lease) return;
    let next: TurnStart | undefined;
    let session: SessionRecord | undefined;
    try {
      session = await this.deps.store.getSession(sessionId);
      // the turn may have ended, and its owner let go, since it was found: then there is nothing to do
      if (session?.status !== "running") return;
      // a chain of turns that stops for a close, or for a message that takes the turn's place,
      // starts no queued turn
      const chainsQueue = stopping === undefined || stopping === "interrupted";
      const events = await this.#readAll(sessionId);
      if (!turnOpen(events)) {
        // the Brain that ran it stopped and left the queue to the next owner
        if (chainsQueue) next = await this.#startHead(session, lease, events);
        return;
      }
      if (stopping === undefined) {
        next = await this.#pickUpWaiting(session, lease);
        if (next) {
          turnLogger(this.deps.logger, next.span).warn(
            { session_id: sessionId },
            "took up a turn waiting for approval",
          );
          return;
        }
      }
      const ended = await this.#endStrandedTurn(session, lease, OWNER_GONE, !chainsQueue);
      next = ended.next;
      turnLogger(this.deps.logger, ended.span).warn(
        { session_id: sessionId, unanswered: ended.unanswered },
        "ended a turn whose owner was gone",
      );
    } finally {
      // the session read above: reading it again could fail, and leave the lease held for good
      if (next && session) this.#run(session, lease, next);
      else lease.release();
    }
  }

  /**
   * The turn of a session whose calls wait for approval, ready to go on: the calls of its step that
   * may have been sent end `brain_restarted`, the others keep waiting. Undefined if none waits.
   */
  async #pickUpWaiting(session: SessionRecord, lease: TurnLease): Promise<TurnStart | undefined> {
    // listening first, so that no answer stored while the log is read is missed
    const watch = await ApprovalWatch.open(this.deps.bus, session.id);
    try {
      const events = await this.#readAll(session.id);
      const model = this.deps.config.models.get(session.config.model);
      const waiting = waitingTurn(events, await contextMeasure(model, this.deps.config.tools));
      if (!waiting) {
        watch.close();
        return undefined;
      }
      const failure = new ToolFailure("brain_restarted", OWNER_GONE.call).toResult();
      const results = waiting.maybeSent.map((call) => ({
        call_id: call.call_id,
        name: call.name,
        ...failure,
        duration_ms: 0,
      }));
      let startedAt = events.at(-1)?.seq ?? 0;
      if (results.length > 0) {
        const stored = await this.#append(
          session.id,
          results.map((data): NewEvent => ({ type: "tool.result", data })),
          { expectStatus: ["running"], ...fenced(lease) },
        );
        if (stored instanceof SessionError)
          throw new Error(`append to ${session.id} refused: ${stored.message}`);
        startedAt = stored.at(-1)?.seq ?? startedAt;
      }
      const known = new Map(waiting.open.results);
      for (const result of results) known.set(result.call_id, result);
      return {
        startedAt,
        span: startTurnSpan(this.deps.tracing, session.id, storedTurnSpan(events)),
        queue: foldQueue([], events),
        resume: { history: waiting.history, open: { ...waiting.open, results: known }, watch },
      };
    } catch (error) {
      watch.close();
      throw error;
    }
  }

  /**
   * Give every unanswered tool call of a turn that can no longer finish a result and mark the turn
   * failed; the session's next queued message starts its turn in the same write, unless the session
   * is being stopped. Returns how many calls were unanswered, the next turn if one started, and the
   * span of this end.
   */
  async #endStrandedTurn(
    session: SessionRecord,
    lease: TurnLease,
    why: Stranding,
    stopping = false,
  ): Promise<{ unanswered: number; next: TurnStart | undefined; span: Span }> {
    const events = await this.#readAll(session.id);
    const maybeSent = new ToolFailure("brain_restarted", why.call);
    const step = lastStep(events);
    const results: NewEvent[] = unansweredCalls(events).map((call) => ({
      type: "tool.result",
      data: {
        call_id: call.call_id,
        name: call.name,
        ...(unsentRefusal(step, call.call_id) ?? maybeSent).toResult(),
        duration_ms: 0,
      },
    }));
    const tally: TurnTally = {
      base: events.at(-1)?.seq ?? 0,
      own: 0,
      highest: 0,
      queue: stopping ? [] : foldQueue([], events),
    };
    const span = startTurnSpan(this.deps.tracing, session.id, storedTurnSpan(events), "turn end");
    const { next } = await this.#appendEnd(
      session,
      lease,
      [...results, turnFailed(why.turn.code, why.turn.message)],
      tally,
      { expectStatus: ["running"] },
    );
    endTurnSpan(span, "failed", why.turn.code);
    countTurnEnd(this.deps.metrics, why.end, secondsSinceStarted(events));
    return { unanswered: results.length, next, span };
  }

  /**
   * Append a turn's end, and with it, in the same write, the start of the next queued message's
   * turn if there is one and the turn was not stopped: a queued message never waits on an idle
   * session. The write is made only if nothing was appended since what the turn knows of the log
   * (`tally`); if something was, the turn reads it (a message may have been queued) and tries again.
   */
  async #appendEnd(
    session: SessionRecord,
    lease: TurnLease,
    end: readonly NewEvent[],
    tally: TurnTally,
    options: AppendOptions = {},
  ): Promise<{ stored: StoredEvent[]; next: TurnStart | undefined }> {
    let lastSeq = tally.highest - tally.base === tally.own ? Math.max(tally.base, tally.highest) : undefined;
    let nextSpan: Span | undefined;
    for (;;) {
      if (lastSeq === undefined) {
        const since = await this.#readFrom(session.id, tally.base);
        tally.queue = foldQueue(tally.queue, since);
        lastSeq = since.at(-1)?.seq ?? tally.base;
        tally.base = lastSeq;
      }
      const head = lease.signal.aborted || this.#stopping ? undefined : tally.queue[0];
      // a Brain that stops leaves its queue to the next owner: the session stays running with no
      // turn open, which the next start, or another instance, takes up (#endOwnerless)
      // (but a close, or a message taking the turn's place, drops or goes before the queue as ever)
      const { reason } = lease.signal;
      const leftByStop =
        reason === SHUTDOWN || (this.#stopping && (!lease.signal.aborted || reason === "interrupted"));
      const owed = leftByStop && tally.queue.length > 0;
      if (head)
        nextSpan ??= startTurnSpan(this.deps.tracing, session.id, parseTraceparent(head.data.traceparent));
      const events: NewEvent[] =
        head && nextSpan
          ? [
              ...end,
              { type: "message.user", data: { content: head.data.content, queued_seq: head.seq } },
              turnStarted(nextSpan),
            ]
          : [...end];
      const result = await this.deps.log.append(session.id, events, {
        ...options,
        ...fenced(lease),
        expectLastSeq: lastSeq,
        setStatus: head || owed ? "running" : "idle",
      });
      if (result.ok) {
        const stored = result.events;
        if (!head || !nextSpan) return { stored, next: undefined };
        const next: TurnStart = {
          startedAt: stored.at(-1)?.seq ?? 0,
          started: stored.slice(end.length),
          span: nextSpan,
          queue: tally.queue.slice(1),
        };
        return { stored: stored.slice(0, end.length), next };
      }
      if (!result.moved) throw refusedAppend(session.id, result);
      lastSeq = undefined;
    }
  }

  /**
   * Run the turn, then each turn its end started from the queue, under one lease. A turn that was
   * interrupted ends without starting the next; the queue then goes on under a lease of its own.
   */
  #run(session: SessionRecord, lease: TurnLease, first: TurnStart): void {
    const chain = async () => {
      let start: TurnStart | undefined = first;
      // a queued turn whose start was written as an interrupt came: the interrupt was the turn
      // before's, which it ended, so this one runs under a lease of its own
      let interruptedBefore: TurnStart | undefined;
      try {
        while (start) {
          if (start !== first && lease.signal.reason === "interrupted") {
            interruptedBefore = start;
            break;
          }
          const current: TurnStart = start;
          start = await this.#runTurn(session, lease, current).catch((error: unknown) => {
            current.resume?.watch.close();
            if (error instanceof TurnLeftWaiting) return undefined;
            return this.#endCrashedTurn(session, lease, current.span, error);
          });
        }
      } finally {
        lease.release();
      }
      if (lease.signal.reason !== "interrupted" || this.#stopping) return;
      if (!interruptedBefore) return this.#startQueued(session.id);
      const next = await this.deps.leases.acquire(session.id);
      // another owner took the turn up meanwhile, and runs or ends it
      if (!next) return;
      // Brain began to stop while the lease was taken: the next start takes the turn up
      if (this.#stopping) return next.release();
      this.#run(session, next, interruptedBefore);
    };
    chain().catch((error: unknown) =>
      this.deps.logger.error({ session_id: session.id, err: error }, "could not start a queued message"),
    );
  }

  /** After an interrupt: the next queued message of an idle session starts its turn. */
  async #startQueued(sessionId: string): Promise<void> {
    const lease = await this.deps.leases.acquire(sessionId);
    if (!lease) return;
    try {
      const session = await this.#sessionOf(sessionId);
      if (session.status !== "idle") return lease.release();
      const next = await this.#startHead(session, lease, await this.#readAll(sessionId));
      if (!next) return lease.release();
      this.#run(session, lease, next);
    } catch (error) {
      lease.release();
      throw error;
    }
  }

  /**
   * Start the turn of the session's next queued message, where no turn is open: after an
   * interrupt (the session is idle), or after a Brain that stopped left the queue to the next
   * owner (the session is still running). Undefined if the queue is empty or the log moved on.
   */
  async #startHead(
    session: SessionRecord,
    lease: TurnLease,
    events: readonly StoredEvent[],
  ): Promise<TurnStart | undefined> {
    const [head, ...rest] = foldQueue([], events);
    if (!head) return undefined;
    const span = startTurnSpan(this.deps.tracing, session.id, parseTraceparent(head.data.traceparent));
    const result = await this.deps.log.append(
      session.id,
      [
        { type: "message.user", data: { content: head.data.content, queued_seq: head.seq } },
        turnStarted(span),
      ],
      {
        expectStatus: [session.status],
        expectLastSeq: events.at(-1)?.seq ?? 0,
        setStatus: "running",
        ...fenced(lease),
      },
    );
    return result.ok
      ? { startedAt: result.events.at(-1)?.seq ?? 0, started: result.events, span, queue: rest }
      : undefined;
  }

  /**
   * A turn that threw (its store refused a write, say) ends as if Brain had restarted, so the
   * session takes messages again at once instead of after the next start. If the store still
   * refuses, the turn is left without an owner, and the next stop or start ends it.
   */
  async #endCrashedTurn(
    session: SessionRecord,
    lease: TurnLease,
    span: Span,
    error: unknown,
  ): Promise<TurnStart | undefined> {
    const logger = turnLogger(this.deps.logger, span);
    const sessionId = session.id;
    const why = crashed(error);
    if (why.turn.code === "store_unavailable")
      logger.warn({ session_id: sessionId }, "turn stopped: the store is away");
    else logger.error({ session_id: sessionId, err: error }, "turn crashed");
    const giveUpAt = Date.now() + CRASH_END_PATIENCE_MS;
    for (;;) {
      try {
        const ended = await this.#endStrandedTurn(session, lease, why);
        logger.warn({ session_id: sessionId, unanswered: ended.unanswered }, "ended a crashed turn");
        return ended.next;
      } catch (settleError) {
        // while the store is away and the turn still ours, its end is worth waiting for
        const waitOn =
          settleError instanceof StoreUnavailableError &&
          lease.signal.reason !== LEASE_LOST &&
          Date.now() < giveUpAt;
        if (!waitOn) {
          logger.error(
            { session_id: sessionId, err: settleError },
            "could not record the end of a crashed turn; the next stop or start of Brain will",
          );
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  /** Run one turn; the next turn, if its end started one from the queue. */
  async #runTurn(session: SessionRecord, lease: TurnLease, start: TurnStart): Promise<TurnStart | undefined> {
    const { config, tracing, metrics } = this.deps;
    const { span } = start;
    const began = performance.now();
    const provider = this.deps.providers.get(session.config.model);
    const tally: TurnTally = { base: start.startedAt, own: 0, highest: start.startedAt, queue: start.queue };
    let next: TurnStart | undefined;
    // what the turn stored, in order: folded into the session's kept conversation when it ends
    const own: StoredEvent[] = [];
    // live events take their place after the last event this turn stored
    const append = (events: readonly NewEvent[], setStatus?: SessionStatus) =>
      inSpan(
        tracing,
        "store append",
        span,
        { "db.operation.name": "append", "brain.events": events.length },
        () => appendUntraced(events, setStatus),
      );
    const appendUntraced = async (events: readonly NewEvent[], setStatus?: SessionStatus) => {
      if (setStatus === "idle") {
        const ended = await this.#appendEnd(session, lease, events, tally);
        next = ended.next;
        own.push(...ended.stored);
        return ended.stored;
      }
      // the log's append itself, with no layer of #append's around it: a turn appends twice a call
      const result = await this.deps.log.append(session.id, events, fenced(lease));
      if (!result.ok) throw refusedAppend(session.id, result);
      const stored = result.events;
      tally.own += stored.length;
      tally.highest = Math.max(tally.highest, stored.at(-1)?.seq ?? 0);
      own.push(...stored);
      return stored;
    };
    if (!provider) {
      await append(
        [turnFailed("unknown_model", `no model "${session.config.model}" in the host config`)],
        "idle",
      );
      endTurnSpan(span, "failed", "unknown_model");
      countTurnEnd(metrics, "failed", (performance.now() - began) / 1000);
      return next;
    }
    const tools = new Map<string, ToolBinding>();
    for (const name of session.config.tools) {
      const binding = config.tools.get(name);
      if (binding?.tenants.has(session.tenant_id)) tools.set(name, binding);
    }
    const { resume } = start;
    const model = config.models.get(session.config.model);
    const history = resume
      ? resume.history
      : await this.#conversations.of(session.id, await contextMeasure(model, config.tools), start.started);
    // one logger for the turn's lines, with its trace ids; the lease's too
    const logger = turnLogger(this.deps.logger, span);
    lease.logUnder?.(logger);
    const tracedAs = (name: string, target: ModelProvider) =>
      tracedModel(target, modelLabels(config, name), span, tracing, metrics);
    const traced = tracedAs(session.config.model, provider);
    // a compaction model's calls are the turn's too: under its span, their lines with its trace ids
    const compaction = model?.window?.compactionModel;
    const summariser = compaction === undefined ? undefined : this.deps.providers.get(compaction);
    let end: TurnRunEnd = "crashed";
    try {
      end = await runTurn(
        {
          session,
          history,
          maxSteps: session.config.max_steps,
          maxTokens: turnBudget(session.config.max_tokens, config.limits.max_tokens_per_turn),
          signal: lease.signal,
          ...(resume && { resume: resume.open }),
        },
        {
          provider: traced,
          context: new ContextKeeper({
            window: model?.window,
            model: session.config.model,
            provider: traced,
            summariser: compaction && summariser ? tracedAs(compaction, summariser) : traced,
            session: { id: session.id, config: session.config },
            signal: lease.signal,
            append,
            metrics,
            logger,
          }),
          dispatcher: tracedTools(this.deps.dispatcher, span, tracing, metrics),
          tools,
          append,
          publishLive: (event) =>
            this.deps.log.publishLive(session.id, Math.max(tally.base, tally.highest), event),
          inspectionFor: () => this.deps.inspectionFor(session, lease.token),
          approvals: () =>
            resume ? Promise.resolve(resume.watch) : ApprovalWatch.open(this.deps.bus, session.id),
          approvalTimeoutMs: Math.round(config.limits.approval_timeout_seconds * 1000),
          expireApproval: async (call) => {
            await recordApproval(this.deps.log, (id) => this.#readAll(id), session.id, {
              call_id: call.call_id,
              decision: "deny",
              expired: true,
            });
          },
          logger,
          metrics,
        },
      );
    } catch (error) {
      if (error instanceof TurnLeftWaiting) end = "left_waiting";
      throw error;
    } finally {
      endTurnSpan(span, end);
      history.release();
    }
    this.#conversations.advance(session.id, own);
    countTurnEnd(metrics, end, (performance.now() - began) / 1000);
    return next;
  }

  async #sessionOf(sessionId: string): Promise<SessionRecord> {
    const session = await this.deps.store.getSession(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    return session;
  }

  async #readAll(sessionId: string): Promise<StoredEvent[]> {
    return this.#readFrom(sessionId, 0);
  }

  async #readFrom(sessionId: string, afterSeq: number): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for (;;) {
      const page = await this.deps.store.readEvents(sessionId, events.at(-1)?.seq ?? afterSeq, PAGE);
      events.push(...page);
      if (page.length < PAGE) return events;
    }
  }

  async #append(
    sessionId: string,
    events: readonly NewEvent[],
    options: AppendOptions,
  ): Promise<StoredEvent[] | SessionError> {
    const result = await this.deps.log.append(sessionId, events, options);
    return result.ok ? result.events : appendRefusal(sessionId, result);
  }
}

/**
 * Why the log refused an append: the session is gone, closed, or its turn is another's, or (a
 * turn's start) its tenant runs its max_concurrent_turns turns already.
 */
function appendRefusal(
  sessionId: string,
  { status, tenantFull }: { status: SessionStatus | undefined; tenantFull?: true },
): SessionError {
  if (tenantFull)
    return new SessionError(
      "too_many_turns",
      "this tenant runs its max_concurrent_turns turns already; try again when one has ended",
    );
  if (status === undefined) return sessionNotFound(sessionId);
  return status === "closed" ? sessionClosed() : busy();
}

/** A turn's append the log refused, which ends the turn. */
function refusedAppend(sessionId: string, refusal: { status: SessionStatus | undefined }): Error {
  return new Error(`append to ${sessionId} refused: ${appendRefusal(sessionId, refusal).message}`);
}

/** A turn's budget: the smaller of the session's and the host's, where either has one (0: none). */
function turnBudget(session: number | undefined, host: number): number {
  if (session === undefined) return host;
  return host > 0 ? Math.min(session, host) : session;
}

/** Why a turn that threw ended, for its unanswered calls and its `turn.failed`. */
function crashed(error: unknown): Stranding {
  if (error instanceof StoreUnavailableError) {
    return {
      call: "Brain's store could not be reached while the call was out",
      turn: { code: "store_unavailable", message: "the store could not be reached; the turn stopped" },
      end: "crashed",
    };
  }
  return {
    call: "Brain's turn stopped on an internal error while the call was out",
    turn: { code: "internal_error", message: "the turn stopped on an internal error; Brain's log has it" },
    end: "crashed",
  };
}

/**
 * How a turn ended, for brain_turns_total and brain_turn_duration_seconds: counted where its end is
 * written to the log, and only there, so a turn counts once wherever it ends (a crashed turn whose
 * end could not be written counts on the Brain that writes it). A turn left waiting for approval
 * has not ended: its next owner counts it.
 */
type CountedTurnEnd = Exclude<TurnRunEnd, "left_waiting">;

function countTurnEnd(metrics: Metrics, end: CountedTurnEnd, seconds: number | undefined): void {
  metrics.turns.inc({ end });
  if (seconds !== undefined) metrics.turnSeconds.observe({ end }, seconds);
}

/** Whether the log's last turn has started and not ended. */
function turnOpen(events: readonly StoredEvent[]): boolean {
  const last = events.findLast((event) => event.type === "turn.started" || endsTurn(event.type));
  return last?.type === "turn.started";
}

/**
 * Seconds since the session's last turn started, by its `turn.started`: a stranded turn's wall
 * time, whose start the Brain that ends it did not see. None where the log holds no such event.
 */
function secondsSinceStarted(events: readonly StoredEvent[]): number | undefined {
  const started = events.findLast((event) => event.type === "turn.started");
  // another instance's clock may have written `at`: never a negative time
  return started && Math.max(0, (Date.now() - Date.parse(started.at)) / 1000);
}

/** The labels of a model entry's calls: its name, its provider, and the provider's model. */
function modelLabels(config: BrainConfig, name: string): ModelEntryLabels {
  const entry = config.models.get(name);
  return {
    name,
    provider: entry?.provider ?? "unknown",
    model: entry && "model" in entry ? entry.model : name,
  };
}

/** Appends of a turn carry its lease's token, where leases can be lost. */
function fenced(lease: TurnLease): { leaseToken?: number } {
  return lease.token === undefined ? {} : { leaseToken: lease.token };
}

function busy(): SessionError {
  return new SessionError(
    "session_busy",
    "a turn is running in this session; wait for it to end or interrupt it",
  );
}
