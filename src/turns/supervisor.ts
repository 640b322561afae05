import { type NewEvent, type StoredEvent, turnFailed } from "../../protocol/events.js";
import type { SessionStatus } from "../../protocol/session.js";
import type { TurnFailureCode } from "../../protocol/turn-failures.js";
import type { BrainConfig, ToolBinding } from "../config/load.js";
import type { EventLog } from "../events/event-log.js";
import type { ModelProvider } from "../models/provider.js";
import { SessionError, sessionClosed, sessionNotFound } from "../sessions/errors.js";
import type { SessionRecord } from "../sessions/session-record.js";
import { type AppendOptions, type Store, StoreUnavailableError } from "../store/store.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import type { TraceContext } from "../telemetry/trace-context.js";
import type { ToolDispatcher } from "../tools/dispatch.js";
import { ToolFailure } from "../tools/outcome.js";
import { unansweredCalls } from "./conversation.js";
import { Conversations } from "./conversations.js";
import { LEASE_LOST, type TurnLease, type TurnLeases } from "./leases.js";
import { runTurn } from "./turn.js";

export interface TurnSupervisorDeps {
  config: BrainConfig;
  store: Store;
  log: EventLog;
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
  /** How long an interrupt or a close waits for the turn's owner to end it. */
  stopWaitMs: number;
  /** How often to look for turns whose owner is gone, where owners can go while Brain runs. */
  takeoverEveryMs: number | undefined;
}

/** Why a turn ended without finishing, for the results of the calls it left out. */
interface Stranding {
  call: string;
  turn: { code: TurnFailureCode; message: string };
}

const OWNER_GONE: Stranding = {
  call: "Brain stopped while the call was out",
  turn: { code: "brain_restarted", message: "Brain stopped during the turn" },
};

const PAGE = 1000;

/** How long a message waits for an idle session's lease that a takeover holds for a moment. */
const LEASE_WAIT_MS = 1000;

/** How long a crashed turn keeps trying to record its end while the store is away. */
const CRASH_END_PATIENCE_MS = 60_000;

/**
 * The turns of every session: starting one for a message, running it under a lease, stopping it
 * (through its owner, wherever that is), and ending the turns whose owner is gone.
 */
export class TurnSupervisor {
  readonly #conversations: Conversations;
  #stopping = false;
  #takeover: NodeJS.Timeout | undefined;

  constructor(private readonly deps: TurnSupervisorDeps) {
    this.#conversations = new Conversations(deps.store);
  }

  /**
   * Store the message and start its turn. The lease is taken first, so that a session marked
   * running always has an owner that a stop can reach.
   */
  async postMessage(
    session: SessionRecord,
    content: string,
    trace?: TraceContext,
  ): Promise<{ seq: number } | SessionError> {
    if (this.#stopping)
      return new SessionError("session_busy", "Brain is shutting down; send the message again later");
    const lease = await this.#leaseForMessage(session);
    if (!lease) return busy();
    const appended = await this.#append(
      session.id,
      [
        { type: "message.user", data: { content } },
        { type: "turn.started", data: {} },
      ],
      { expectStatus: ["idle"], setStatus: "running", ...fenced(lease) },
    ).catch((error: unknown) => {
      lease.release();
      throw error;
    });
    if (appended instanceof SessionError) {
      lease.release();
      return appended;
    }
    this.#run(session, lease, appended.at(-1)?.seq ?? 0, trace);
    return { seq: appended[0]?.seq ?? 0 };
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
    if (outcome === "no_owner") await this.#endOwnerless(session.id);
    return "stopped";
  }

  async interrupt(session: SessionRecord): Promise<SessionError | undefined> {
    if (session.status === "closed") return sessionClosed();
    const stopped = await this.stop(session, "interrupted");
    if (stopped === "none") return new SessionError("no_turn_running", "no turn is running in this session");
    return stopped instanceof SessionError ? stopped : undefined;
  }

  /**
   * End what a stopped Brain left running: every unanswered tool call gets a `brain_restarted`
   * result, and its turn is marked failed, so each `tool.call` still has exactly one result.
   */
  async recover(): Promise<number> {
    const running = await this.deps.store.sessionsWithStatus("running");
    const ownerless = await this.deps.leases.ownerless(running.map((session) => session.id));
    for (const sessionId of ownerless) await this.#endOwnerless(sessionId);
    return ownerless.length;
  }

  /**
   * Where an owner can go while Brain runs (another instance killed), look for its turns every
   * `takeoverEveryMs` and end them.
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

  /** Interrupt every turn this process runs and wait for each to record its end. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#takeover);
    await this.deps.leases.stopAll("shutdown");
  }

  runningTurns(): number {
    return this.deps.leases.held();
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

  /** End a turn that has no owner, under a lease of its own so that nobody else ends it too. */
  async #endOwnerless(sessionId: string): Promise<void> {
    const lease = await this.deps.leases.acquire(sessionId);
    if (!lease) return;
    try {
      // the turn may have ended, and its owner let go, since it was found: then there is nothing to do
      if ((await this.deps.store.getSession(sessionId))?.status !== "running") return;
      const unanswered = await this.#endStrandedTurn(sessionId, lease, OWNER_GONE);
      this.deps.logger.warn({ session_id: sessionId, unanswered }, "ended a turn whose owner was gone");
    } finally {
      lease.release();
    }
  }

  /**
   * Give every unanswered tool call of a turn that can no longer finish a result, mark the turn
   * failed and the session idle. Returns how many calls were unanswered.
   */
  async #endStrandedTurn(sessionId: string, lease: TurnLease, why: Stranding): Promise<number> {
    const events = await this.#readAll(sessionId);
    const failure = new ToolFailure("brain_restarted", why.call).toResult();
    const results: NewEvent[] = unansweredCalls(events).map((call) => ({
      type: "tool.result",
      data: { call_id: call.call_id, name: call.name, ...failure, duration_ms: 0 },
    }));
    await this.#append(sessionId, [...results, turnFailed(why.turn.code, why.turn.message)], {
      expectStatus: ["running"],
      setStatus: "idle",
      ...fenced(lease),
    });
    return results.length;
  }

  #run(session: SessionRecord, lease: TurnLease, startedAt: number, trace: TraceContext | undefined): void {
    this.#runTurn(session, lease, startedAt, trace)
      .catch((error) => this.#endCrashedTurn(session.id, lease, error))
      .finally(() => lease.release());
  }

  /**
   * A turn that threw (its store refused a write, say) ends as if Brain had restarted, so the
   * session takes messages again at once instead of after the next start. If the store still
   * refuses, the turn is left without an owner, and the next stop or start ends it.
   */
  async #endCrashedTurn(sessionId: string, lease: TurnLease, error: unknown): Promise<void> {
    const { logger } = this.deps;
    const why = crashed(error);
    if (why.turn.code === "store_unavailable")
      logger.warn({ session_id: sessionId }, "turn stopped: the store is away");
    else logger.error({ session_id: sessionId, err: error }, "turn crashed");
    const giveUpAt = Date.now() + CRASH_END_PATIENCE_MS;
    for (;;) {
      try {
        const unanswered = await this.#endStrandedTurn(sessionId, lease, why);
        logger.warn({ session_id: sessionId, unanswered }, "ended a crashed turn");
        return;
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
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  async #runTurn(
    session: SessionRecord,
    lease: TurnLease,
    startedAt: number,
    trace: TraceContext | undefined,
  ): Promise<void> {
    const { config } = this.deps;
    const provider = this.deps.providers.get(session.config.model);
    // live events take their place after the last event this turn stored
    let lastSeq = startedAt;
    const append = async (events: readonly NewEvent[], setStatus?: SessionStatus) => {
      const stored = await this.#append(session.id, events, {
        ...fenced(lease),
        ...(setStatus && { setStatus }),
      });
      if (stored instanceof SessionError)
        throw new Error(`append to ${session.id} refused: ${stored.message}`);
      lastSeq = Math.max(lastSeq, stored.at(-1)?.seq ?? 0);
      return stored;
    };
    if (!provider) {
      await append(
        [turnFailed("unknown_model", `no model "${session.config.model}" in the host config`)],
        "idle",
      );
      return;
    }
    const tools = new Map<string, ToolBinding>();
    for (const name of session.config.tools) {
      const binding = config.tools.get(name);
      if (binding?.tenants.has(session.tenant_id)) tools.set(name, binding);
    }
    const history = await this.#conversations.of(session.id);
    const end = await runTurn(
      { session, history, maxSteps: session.config.max_steps, signal: lease.signal, trace },
      {
        provider,
        dispatcher: this.deps.dispatcher,
        tools,
        append,
        publishLive: (event) => this.deps.log.publishLive(session.id, lastSeq, event),
        inspectionFor: () => this.deps.inspectionFor(session, lease.token),
        logger: this.deps.logger,
        metrics: this.deps.metrics,
      },
    );
    this.deps.metrics.turns.inc({ end });
  }

  async #readAll(sessionId: string): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for (;;) {
      const page = await this.deps.store.readEvents(sessionId, events.at(-1)?.seq ?? 0, PAGE);
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
    if (result.ok) return result.events;
    if (result.status === undefined) return sessionNotFound(sessionId);
    return result.status === "closed" ? sessionClosed() : busy();
  }
}

/** Why a turn that threw ended, for its unanswered calls and its `turn.failed`. */
function crashed(error: unknown): Stranding {
  if (error instanceof StoreUnavailableError) {
    return {
      call: "Brain's store could not be reached while the call was out",
      turn: { code: "store_unavailable", message: "the store could not be reached; the turn stopped" },
    };
  }
  return {
    call: "Brain's turn stopped on an internal error while the call was out",
    turn: { code: "internal_error", message: "the turn stopped on an internal error; Brain's log has it" },
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
