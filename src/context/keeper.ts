import type { ContextCompactedData, NewEvent, StoredEvent } from "../../protocol/events.js";
import type { SessionConfig } from "../../protocol/session.js";
import {
  ModelError,
  type ModelProvider,
  type ModelReply,
  type ToolSpec,
  type Usage,
} from "../models/provider.js";
import type { Logger } from "../telemetry/logger.js";
import type { Metrics } from "../telemetry/metrics.js";
import {
  COMPACTION_PROMPT,
  chooseCut,
  compactionMessages,
  leftOutNote,
  truncationNote,
} from "./compaction.js";
import type { ContextHistory, HistoryEntry } from "./history.js";
import { requestTokens, type TokenCounter, tokenCounter } from "./tokens.js";
import { type ContextWindow, fits } from "./window.js";

/** What a model request sends besides the conversation. */
interface ModelRequestFrame {
  system: string | undefined;
  tools: readonly ToolSpec[];
}

export interface ContextKeeperDeps {
  /** The session's model entry's window; undefined: the conversation is sent whole. */
  window: ContextWindow | undefined;
  /** The model entry's name, for metrics. */
  model: string;
  /** The session's model: a replaying one makes the compactions of its recording. */
  provider: ModelProvider;
  /** The model that writes summaries: `context.compaction_model`, else the session's. */
  summariser: ModelProvider;
  session: { id: string; config: SessionConfig };
  signal: AbortSignal;
  append: (events: readonly NewEvent[]) => Promise<StoredEvent[]>;
  metrics: Metrics;
  /** The turn's logger, with its trace ids: the summariser's retries are logged on it. */
  logger: Logger;
}

/**
 * Keeps a turn's model calls inside the model's window: before a call that would pass the window's
 * limit it compacts the conversation (a summary the model writes, or the oldest turns left out),
 * stored as `context.compacted` so every later fold and every replay sends the same; when the
 * provider still refuses the call as too long, it compacts once more and retries once.
 */
export class ContextKeeper {
  /** The last request's system prompt and tool specs, counted: a turn sends the same at every step. */
  #counted: { request: ModelRequestFrame; counter: TokenCounter; tokens: number } | undefined;
  /** The tokens of the compactions made since the turn last took them. */
  #spent: Usage = { input_tokens: 0, output_tokens: 0 };

  constructor(private readonly deps: ContextKeeperDeps) {}

  async complete(
    history: ContextHistory,
    request: ModelRequestFrame,
    call: (messages: ContextHistory) => Promise<ModelReply>,
  ): Promise<ModelReply> {
    const overhead = this.#overheadOf(request, history.measure.counter);
    const reply = await this.#call(history, overhead, call);
    history.answered(reply.usage);
    return reply;
  }

  async #call(
    history: ContextHistory,
    overhead: number,
    call: (messages: ContextHistory) => Promise<ModelReply>,
  ): Promise<ModelReply> {
    // most calls fit: they go straight to the model, with no compaction step to wait on
    if (this.#mayCompact(history, overhead)) await this.#compact(history, overhead, false);
    try {
      return await call(history);
    } catch (error) {
      if (!isTooLong(error)) throw error;
      if (!(await this.#compact(history, overhead, true))) throw this.#exceeded(history, overhead, error);
      try {
        return await call(history);
      } catch (again) {
        throw isTooLong(again) ? this.#exceeded(history, overhead, again) : again;
      }
    }
  }

  /**
   * The tokens the compactions made since the last take used: the turn counts them with its model
   * calls, in its usage and against its budget, as they are spent for it.
   */
  takeCompactionUsage(): Usage {
    const spent = this.#spent;
    this.#spent = { input_tokens: 0, output_tokens: 0 };
    return spent;
  }

  #overheadOf(request: ModelRequestFrame, counter: TokenCounter): number {
    const counted = this.#counted;
    if (
      counted?.counter === counter &&
      counted.request.tools === request.tools &&
      counted.request.system === request.system
    )
      return counted.tokens;
    const tokens = requestTokens(counter, request.system, request.tools);
    this.#counted = { request, counter, tokens };
    return tokens;
  }

  /**
   * Whether #compact could do anything short of `force`: a compaction recorded for this step, or a
   * window passed. Asked before every model call, so a model that records compactions (the scripted
   * one) waits on no compaction step where its script has none.
   */
  #mayCompact(history: ContextHistory, overhead: number): boolean {
    const { window, provider, session } = this.deps;
    return (
      provider.recordedCompaction?.(session, history.steps()) !== undefined ||
      (window !== undefined && !fits(window, history.tokens(overhead)))
    );
  }

  /** Compact when the conversation passes the limit (or always, `force`d); whether it did. */
  async #compact(history: ContextHistory, overhead: number, force: boolean): Promise<boolean> {
    const { window, provider, session } = this.deps;
    const recorded = provider.recordedCompaction?.(session, history.steps());
    if (recorded) {
      const { usage = { input_tokens: 0, output_tokens: 0 }, ...made } = recorded;
      await this.#store(history, overhead, { ...made, usage });
      return true;
    }
    if (!window) return false;
    const before = history.tokens(overhead);
    if (!force && fits(window, before)) return false;
    const room = window.limit - window.reserve - overhead;
    // the newest turns kept take up to half the room, so the next compaction is turns away; after
    // the provider refused, Brain's count was wrong: keep only the turn under way
    const cut = chooseCut(history.entries(), force ? 0 : Math.floor(room / 2));
    if (cut === undefined) return false;
    const entries = history.entries();
    const summarised = entries.slice(0, cut);
    const written =
      window.strategy === "compact" ? await this.#summarise(history, summarised, room) : undefined;
    const made = written ?? {
      strategy: "truncate" as const,
      summary: truncationNote(summarised),
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    await this.#store(history, overhead, { ...made, through_seq: (entries[cut]?.seq ?? 1) - 1 });
    return true;
  }

  /**
   * The summary of the messages before a cut, by the compaction model when the entry names another
   * (sent the newest that fit its own window, counted its way), else by the session's model (sent
   * what fits `room`). Undefined when the summarising model refuses them as too long even so: its
   * count disagrees with Brain's, and as the part to summarise only grows, every later turn would
   * fail the same way; those turns are left out with a note instead.
   */
  async #summarise(
    history: ContextHistory,
    summarised: readonly HistoryEntry[],
    room: number,
  ): Promise<Pick<ContextCompactedData, "strategy" | "summary" | "usage"> | undefined> {
    const other = this.deps.window?.summariser;
    const counter = other ? await tokenCounter(other.provider) : history.measure.counter;
    const budget = other ? (other.room ?? Number.POSITIVE_INFINITY) : room;
    const { messages, left } = compactionMessages(summarised, budget, counter, history.measure.counter);
    let reply: ModelReply;
    try {
      reply = await this.deps.summariser.complete({
        session: this.deps.session,
        system: COMPACTION_PROMPT,
        messages,
        tools: [],
        signal: this.deps.signal,
        steps: history.steps(),
        compaction: true,
        logger: this.deps.logger,
        onDelta: () => undefined,
      });
    } catch (error) {
      if (!isTooLong(error)) throw error;
      this.deps.logger.warn(
        { err: error.message, session_id: this.deps.session.id },
        "the summarising model refused the conversation as too long: its oldest turns are left out instead",
      );
      return undefined;
    }
    const summary = left > 0 ? `${reply.text}\n\n${leftOutNote(left)}` : reply.text;
    return { strategy: "compact", summary, usage: reply.usage };
  }

  /** Apply a compaction to the turn's history and store it, with the counts before and after. */
  async #store(
    history: ContextHistory,
    overhead: number,
    made: Omit<ContextCompactedData, "tokens_before" | "tokens_after">,
  ): Promise<void> {
    const data: ContextCompactedData = { ...made, tokens_before: history.tokens(overhead), tokens_after: 0 };
    history.compact(data);
    data.tokens_after = history.tokens(overhead);
    await this.deps.append([{ type: "context.compacted", data }]);
    this.#spent.input_tokens += data.usage.input_tokens;
    this.#spent.output_tokens += data.usage.output_tokens;
    const { metrics, model } = this.deps;
    metrics.compactions.inc({ model, strategy: data.strategy });
    metrics.compactionTokens.inc({ model, kind: "input" }, data.usage.input_tokens);
    metrics.compactionTokens.inc({ model, kind: "output" }, data.usage.output_tokens);
  }

  #exceeded(history: ContextHistory, overhead: number, error: ModelError): ModelError {
    const tokens = history.tokens(overhead);
    const contextWindow = this.deps.window?.contextWindow;
    return new ModelError(
      "context_exceeded",
      `the conversation (about ${tokens} tokens${contextWindow ? ` for a window of ${contextWindow}` : ""}) is too long for the model even after compacting it: ${error.message}`,
      { tokens, ...(contextWindow !== undefined && { context_window: contextWindow }) },
    );
  }
}

function isTooLong(error: unknown): error is ModelError {
  return error instanceof ModelError && error.code === "context_exceeded";
}
