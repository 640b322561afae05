import type { SessionConfig, SessionConfigInput } from "../../protocol/session.js";
import type { BrainConfig } from "../config/load.js";
import type { EventLog } from "../events/event-log.js";
import { isId, newId } from "../ids.js";
import { isoNow } from "../iso-now.js";
import type { Store } from "../store/store.js";
import type { TurnSupervisor } from "../turns/supervisor.js";
import { SessionError, sessionClosed, sessionNotFound } from "./errors.js";
import type { SessionRecord } from "./session-record.js";

export interface SessionDirectoryDeps {
  config: BrainConfig;
  store: Store;
  log: EventLog;
  turns: TurnSupervisor;
}

/** A close that keeps losing to new messages gives up after this many tries instead of going on. */
const CLOSE_ATTEMPTS = 5;
/**
 * About how many bytes of sessions' configs a page of the listing holds at most, as a page of
 * events is bounded: a config may hold up to a request body's worth of metadata, and a hundred of
 * them would be a page of a hundred megabytes.
 */
export const LIST_PAGE_BYTES = 8 * 1024 * 1024;

/** Sessions for every tenant: creating, finding, listing and closing them. */
export class SessionDirectory {
  constructor(private readonly deps: SessionDirectoryDeps) {}

  async create(tenantId: string, input: SessionConfigInput = {}): Promise<SessionRecord | SessionError> {
    const { config } = this.deps;
    const model = input.model ?? config.defaultModel;
    const entry = config.models.get(model);
    if (!entry) return new SessionError("invalid_request", `config.model: unknown model "${model}"`);
    // only the scripted model plays a script: any other would ignore it and call its provider,
    // so a replay meant to need no key, network or money would quietly need all three
    if (input.script !== undefined && entry.provider !== "scripted") {
      return new SessionError(
        "invalid_request",
        `config.script: needs a model whose provider is "scripted"; model "${model}" is provider "${entry.provider}"`,
      );
    }
    for (const [i, name] of (input.tools ?? []).entries()) {
      if (!config.tools.get(name)?.tenants.has(tenantId)) {
        return new SessionError("invalid_request", `config.tools[${i}]: unknown tool "${name}"`);
      }
    }
    const maxSteps = input.max_steps ?? config.limits.max_steps_per_turn;
    if (maxSteps > config.limits.max_steps_per_turn) {
      return new SessionError(
        "invalid_request",
        `config.max_steps: must be at most ${config.limits.max_steps_per_turn} (limits.max_steps_per_turn)`,
      );
    }
    const hostBudget = config.limits.max_tokens_per_turn;
    if (input.max_tokens !== undefined && hostBudget > 0 && input.max_tokens > hostBudget) {
      return new SessionError(
        "invalid_request",
        `config.max_tokens: must be at most ${hostBudget} (limits.max_tokens_per_turn)`,
      );
    }
    const sessionConfig: SessionConfig = {
      model,
      ...(input.system !== undefined && { system: input.system }),
      tools: input.tools ?? [],
      max_steps: maxSteps,
      ...(input.max_tokens !== undefined && { max_tokens: input.max_tokens }),
      metadata: input.metadata ?? {},
      ...(input.script !== undefined && { script: input.script }),
    };
    const created = await this.deps.log.createSession(
      { id: newId("ses"), tenant_id: tenantId, config: sessionConfig, created_at: isoNow() },
      { type: "session.created", data: { config: sessionConfig } },
    );
    return created.session;
  }

  /** The session if it exists and belongs to the tenant; another tenant's session does not exist. */
  async get(tenantId: string, id: string): Promise<SessionRecord | undefined> {
    // a path's id is anything a client sent: only the shape of one of ours reaches the store
    if (!isId("ses", id)) return undefined;
    const session = await this.deps.store.getSession(id);
    return session?.tenant_id === tenantId ? session : undefined;
  }

  async list(
    tenantId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ sessions: SessionRecord[]; next_cursor: string | null }> {
    const sessions = await this.deps.store.listSessions(tenantId, limit + 1, cursor, LIST_PAGE_BYTES);
    const page = sessions.slice(0, limit);
    // a page its bytes cut short may have sessions after it: the client pages on to an empty one
    const more = sessions.length > limit || configBytes(page) >= LIST_PAGE_BYTES;
    return { sessions: page, next_cursor: more ? (page.at(-1)?.id ?? null) : null };
  }

  /** Stop the running turn, if any, then record `session.closed`; later writes are refused. */
  async close(tenantId: string, id: string): Promise<SessionRecord | SessionError> {
    for (let attempt = 1; attempt <= CLOSE_ATTEMPTS; attempt++) {
      const session = await this.get(tenantId, id);
      if (!session) return sessionNotFound(id);
      if (session.status === "closed")
        return new SessionError("session_closed", "the session is already closed");
      const stopped = await this.deps.turns.stop(session, "closed");
      if (stopped instanceof SessionError) return stopped;
      const appended = await this.deps.log.append(id, [{ type: "session.closed", data: {} }], {
        expectStatus: ["idle"],
        setStatus: "closed",
      });
      if (appended.ok) {
        // no turn will read it again
        this.deps.turns.forgetConversation(id);
        return { ...session, status: "closed" };
      }
      if (appended.status === "closed") return sessionClosed();
      // a message started a turn in between: that one is stopped too, on the next attempt
    }
    return new SessionError(
      "session_busy",
      "new turns kept starting while the session was being closed; try again",
    );
  }
}

/** The size of the sessions' configs as the store keeps them, JSON. */
function configBytes(sessions: readonly SessionRecord[]): number {
  let bytes = 0;
  for (const session of sessions) bytes += JSON.stringify(session.config).length;
  return bytes;
}
