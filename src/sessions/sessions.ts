import { ApiError, sessionNotFound } from "../api/errors.js";
import type { BrainConfig, ToolBinding } from "../config/load.js";
import { newId } from "../ids.js";
import type { ModelProvider } from "../models/provider.js";
import type { Store } from "../store/store.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import type { TraceContext } from "../telemetry/trace-context.js";
import type { ToolDispatcher } from "../tools/dispatch.js";
import { ToolFailure } from "../tools/outcome.js";
import { unansweredCalls } from "./conversation.js";
import { Conversations } from "./conversations.js";
import type { EventHub } from "./event-hub.js";
import type { NewEvent, StoredEvent } from "./events.js";
import type { SessionConfig, SessionConfigInput, SessionRecord, SessionStatus } from "./session-config.js";
import { runTurn } from "./turn.js";

export interface SessionsDeps {
  config: BrainConfig;
  store: Store;
  hub: EventHub;
  dispatcher: ToolDispatcher;
  providers: ReadonlyMap<string, ModelProvider>;
  /** A token that reads this session until released, for bindings with inspect_session. */
  inspectionFor: (session: SessionRecord) => { token: string; brainUrl: string; release: () => void };
  logger: Logger;
  metrics: Metrics;
}

interface RunningTurn {
  controller: AbortController;
  done: Promise<void>;
}

const PAGE = 1000;

/** Sessions for every tenant: their lifecycle, and the turns running in this process. */
export class Sessions {
  readonly #running = new Map<string, RunningTurn>();
  readonly #conversations: Conversations;
  #stopping = false;

  constructor(private readonly deps: SessionsDeps) {
    this.#conversations = new Conversations(deps.store);
  }

  async create(tenantId: string, input: SessionConfigInput = {}): Promise<SessionRecord | ApiError> {
    const { config } = this.deps;
    const model = input.model ?? config.defaultModel;
    const entry = config.models.get(model);
    if (!entry) return new ApiError("invalid_request", `config.model: unknown model "${model}"`);
    // only the scripted model plays a script: any other would ignore it and call its provider,
    // so a replay meant to need no key, network or money would quietly need all three
    if (input.script !== undefined && entry.provider !== "scripted") {
      return new ApiError(
        "invalid_request",
        `config.script: needs a model whose provider is "scripted"; model "${model}" is provider "${entry.provider}"`,
      );
    }
    for (const [i, name] of (input.tools ?? []).entries()) {
      if (!config.tools.get(name)?.tenants.has(tenantId)) {
        return new ApiError("invalid_request", `config.tools[${i}]: unknown tool "${name}"`);
      }
    }
    const maxSteps = input.max_steps ?? config.limits.max_steps_per_turn;
    if (maxSteps > config.limits.max_steps_per_turn) {
      return new ApiError(
        "invalid_request",
        `config.max_steps: must be at most ${config.limits.max_steps_per_turn} (limits.max_steps_per_turn)`,
      );
    }
    const sessionConfig: SessionConfig = {
      model,
      ...(input.system !== undefined && { system: input.system }),
      tools: input.tools ?? [],
      max_steps: maxSteps,
      metadata: input.metadata ?? {},
      ...(input.script !== undefined && { script: input.script }),
    };
    const created = await this.deps.store.createSession(
      { id: newId("ses"), tenant_id: tenantId, config: sessionConfig, created_at: new Date().toISOString() },
      { type: "session.created", data: { config: sessionConfig } },
    );
    this.deps.hub.publish(created.session.id, created.event);
    return created.session;
  }

  /** The session if it exists and belongs to the tenant; another tenant's session does not exist. */
  async get(tenantId: string, id: string): Promise<SessionRecord | undefined> {
    const session = await this.deps.store.getSession(id);
    return session?.tenant_id === tenantId ? session : undefined;
  }

  async list(
    tenantId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ sessions: SessionRecord[]; next_cursor: string | null }> {
    const sessions = await this.deps.store.listSessions(tenantId, limit + 1, cursor);
    const page = sessions.slice(0, limit);
    return { sessions: page, next_cursor: sessions.length > limit ? (page.at(-1)?.id ?? null) : null };
  }

  /** `trace` is the client's trace context: the turn's tool requests carry it on as `traceparent`. */
  async postMessage(
    tenantId: string,
    id: string,
    content: string,
    trace?: TraceContext,
  ): Promise<{ seq: number } | ApiError> {
    const session = await this.get(tenantId, id);
    if (!session) return sessionNotFound(id);
    if (this.#stopping)
      return new ApiError("session_busy", "Brain is shutting down; send the message again later");
    const appended = await this.#append(
      id,
      [
        { type: "message.user", data: { content } },
        { type: "turn.started", data: {} },
      ],
      { expectStatus: ["idle"], setStatus: "running" },
    );
    if (!Array.isArray(appended)) return appended;
    this.#startTurn(session, trace);
    return { seq: appended[0]?.seq ?? 0 };
  }

  async interrupt(tenantId: string, id: string, reason = "interrupted"): Promise<SessionRecord | ApiError> {
    const session = await this.get(tenantId, id);
    if (!session) return sessionNotFound(id);
    const running = this.#running.get(id);
    if (!running) {
      return session.status === "closed"
        ? new ApiError("session_closed", "the session is closed")
        : new ApiError("no_turn_running", "no turn is running in this session");
    }
    running.controller.abort(reason);
    await running.done;
    return (await this.get(tenantId, id)) ?? session;
  }

  async close(tenantId: string, id: string): Promise<SessionRecord | ApiError> {
    for (;;) {
      const session = await this.get(tenantId, id);
      if (!session) return sessionNotFound(id);
      if (session.status === "closed") return new ApiError("session_closed", "the session is already closed");
      const running = this.#running.get(id);
      if (running) {
        running.controller.abort("closed");
        await running.done;
        continue;
      }
      const appended = await this.#append(id, [{ type: "session.closed", data: {} }], {
        expectStatus: ["idle"],
        setStatus: "closed",
      });
      // a message that started a turn in between loses the race to close: interrupt it too
      if (appended instanceof ApiError && appended.code === "session_busy") continue;
      if (appended instanceof ApiError) return appended;
      return { ...session, status: "closed" };
    }
  }

  /**
   * End what a stopped Brain left running: every unanswered tool call gets a `brain_restarted`
   * result, and its turn is marked failed, so each `tool.call` still has exactly one result.
   */
  async recover(): Promise<number> {
    const stranded = await this.deps.store.sessionsWithStatus("running");
    for (const session of stranded) {
      const unanswered = await this.#endStrandedTurn(session.id, {
        call: "Brain stopped while the call was out",
        turn: { code: "brain_restarted", message: "Brain stopped during the turn" },
      });
      this.deps.logger.warn({ session_id: session.id, unanswered }, "recovered a turn Brain left running");
    }
    return stranded.length;
  }

  /**
   * Give every unanswered tool call of a turn that can no longer finish a `brain_restarted`
   * result, mark the turn failed and the session idle. Returns how many calls were unanswered.
   */
  async #endStrandedTurn(
    sessionId: string,
    why: { call: string; turn: { code: string; message: string } },
  ): Promise<number> {
    const events = await this.#readAll(sessionId);
    const failure = new ToolFailure("brain_restarted", why.call).toResult();
    const results: NewEvent[] = unansweredCalls(events).map((call) => ({
      type: "tool.result",
      data: { call_id: call.call_id, name: call.name, ...failure, duration_ms: 0 },
    }));
    await this.#append(sessionId, [...results, { type: "turn.failed", data: { error: why.turn } }], {
      expectStatus: ["running"],
      setStatus: "idle",
    });
    return results.length;
  }

  /** Interrupt every running turn and wait for each to record its end. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    const turns = [...this.#running.values()];
    for (const turn of turns) turn.controller.abort("shutdown");
    await Promise.all(turns.map((turn) => turn.done));
  }

  runningTurns(): number {
    return this.#running.size;
  }

  #startTurn(session: SessionRecord, trace: TraceContext | undefined): void {
    const controller = new AbortController();
    const done = this.#runTurn(session, controller.signal, trace)
      .catch((error) => this.#endCrashedTurn(session.id, error))
      .finally(() => this.#running.delete(session.id));
    this.#running.set(session.id, { controller, done });
  }

  /**
   * A turn that threw (its store refused a write, say) ends as if Brain had restarted, so the
   * session takes messages again at once instead of after the next start. If the store still
   * refuses, the next start's recovery does it.
   */
  async #endCrashedTurn(sessionId: string, error: unknown): Promise<void> {
    const { logger } = this.deps;
    logger.error({ session_id: sessionId, err: error }, "turn crashed");
    try {
      const unanswered = await this.#endStrandedTurn(sessionId, {
        call: "Brain's turn stopped on an internal error while the call was out",
        turn: {
          code: "internal_error",
          message: "the turn stopped on an internal error; Brain's log has it",
        },
      });
      logger.warn({ session_id: sessionId, unanswered }, "ended a crashed turn");
    } catch (settleError) {
      logger.error(
        { session_id: sessionId, err: settleError },
        "could not record the end of a crashed turn; Brain's next start will",
      );
    }
  }

  async #runTurn(
    session: SessionRecord,
    signal: AbortSignal,
    trace: TraceContext | undefined,
  ): Promise<void> {
    const { config } = this.deps;
    const provider = this.deps.providers.get(session.config.model);
    const append = async (events: readonly NewEvent[], setStatus?: SessionStatus) => {
      const stored = await this.#append(session.id, events, setStatus ? { setStatus } : {});
      if (stored instanceof ApiError) throw new Error(`append to ${session.id} refused: ${stored.message}`);
      return stored;
    };
    if (!provider) {
      await append(
        [
          {
            type: "turn.failed",
            data: {
              error: {
                code: "unknown_model",
                message: `no model "${session.config.model}" in the host config`,
              },
            },
          },
        ],
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
      { session, history, maxSteps: session.config.max_steps, signal, trace },
      {
        provider,
        dispatcher: this.deps.dispatcher,
        tools,
        append,
        publishLive: (type, data) =>
          this.deps.hub.publish(session.id, { type, at: new Date().toISOString(), data }),
        inspectionFor: () => this.deps.inspectionFor(session),
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

  /** Append and then publish: an event is committed before any client sees it. */
  async #append(
    sessionId: string,
    events: readonly NewEvent[],
    options: { expectStatus?: SessionStatus[]; setStatus?: SessionStatus },
  ): Promise<StoredEvent[] | ApiError> {
    const result = await this.deps.store.append(sessionId, events, options);
    if (!result.ok) {
      if (result.status === undefined) return sessionNotFound(sessionId);
      return result.status === "closed"
        ? new ApiError("session_closed", "the session is closed")
        : new ApiError(
            "session_busy",
            "a turn is running in this session; wait for it to end or interrupt it",
          );
    }
    for (const event of result.events) this.deps.hub.publish(sessionId, event);
    return result.events;
  }
}
