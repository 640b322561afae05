import type { ContextStrategy } from "../../protocol/context.js";
import { DEFAULT_CONTEXT_THRESHOLD, type ModelEntry } from "../config/schema.js";
import { DEFAULT_MAX_TOKENS } from "../models/anthropic-request.js";
import { knownWindow } from "./model-windows.js";

/** How one model entry keeps its conversations inside its context window. */
export interface ContextWindow {
  /** The model's window, in tokens. */
  contextWindow: number;
  /** What a model call may fill, the answer's room included: `threshold` of the window. */
  limit: number;
  /** The room kept for the answer: the entry's max_tokens, else what the provider may write. */
  reserve: number;
  strategy: ContextStrategy;
  /** The model entry that writes summaries; undefined for this one. */
  compactionModel: string | undefined;
  /** What that other entry's summarising calls may hold; undefined when this model summarises. */
  summariser?: SummariserWindow | undefined;
}

/** The room of a compaction model's request, counted as its own provider counts. */
export interface SummariserWindow {
  provider: ModelEntry["provider"];
  /** Its limit less its reserve for the summary; undefined: no bound (a scripted entry without a window). */
  room: number | undefined;
}

// the room kept for an answer when the entry sets no max_tokens and the model may write more
const DEFAULT_RESERVE = 8192;

/**
 * The window of a model entry: its own numbers, else the documented ones of its model. A scripted
 * entry without `context_window` has none (its conversations are never compacted); a provider's
 * model that neither knows is a problem for `-check`, and so is a max_tokens the model cannot write,
 * which the provider would refuse every request for.
 */
export function contextWindowOf(
  entry: ModelEntry,
): { window: ContextWindow | undefined } | { problems: string[] } {
  const known = entry.provider === "scripted" ? undefined : knownWindow(entry.provider, entry.model);
  const maxOutput = entry.max_output_tokens ?? known?.maxOutputTokens;
  const asked = entry.provider === "scripted" ? undefined : entry.max_tokens;
  const problems: string[] = [];
  if (entry.provider !== "scripted") {
    // Anthropic's requests carry max_tokens even when the entry sets none: the default must fit too
    const sent = asked ?? (entry.provider === "anthropic" ? DEFAULT_MAX_TOKENS : undefined);
    if (sent !== undefined && maxOutput !== undefined && sent > maxOutput) {
      problems.push(
        `max_tokens: ${asked === undefined ? `unset, so requests ask for ${sent}` : sent} tokens, more than model "${entry.model}" can write (max_output_tokens ${maxOutput}); the provider would refuse every call, so set max_tokens to ${maxOutput} or less`,
      );
    }
  }
  const contextWindow = entry.context_window ?? known?.contextWindow;
  if (contextWindow === undefined) {
    if (entry.provider === "scripted") return { window: undefined };
    problems.push(
      `context_window: Brain does not know the window of model "${entry.model}"; set context_window (and max_output_tokens) in tokens, as its provider documents them`,
    );
    return { problems };
  }
  const fallback = entry.provider === "anthropic" ? DEFAULT_MAX_TOKENS : DEFAULT_RESERVE;
  const reserve =
    entry.provider === "scripted"
      ? (maxOutput ?? 0)
      : Math.min(asked ?? fallback, maxOutput ?? Number.POSITIVE_INFINITY);
  const limit = Math.floor((entry.context?.threshold ?? DEFAULT_CONTEXT_THRESHOLD) * contextWindow);
  if (reserve >= limit) {
    problems.push(
      `context_window: ${contextWindow} tokens at threshold ${entry.context?.threshold ?? DEFAULT_CONTEXT_THRESHOLD} leave no room for the conversation beside an answer of ${reserve} tokens; lower max_tokens or raise the threshold`,
    );
  }
  if (problems.length > 0) return { problems };
  return {
    window: {
      contextWindow,
      limit,
      reserve,
      strategy: entry.context?.strategy ?? "compact",
      compactionModel: entry.context?.compaction_model,
    },
  };
}

/** What a model entry's summarising calls for another entry's sessions may hold. */
export function summariserWindow(
  provider: ModelEntry["provider"],
  window: ContextWindow | undefined,
): SummariserWindow {
  return { provider, room: window && window.limit - window.reserve };
}

/** Whether a conversation of `tokens` leaves the answer its room within the window's limit. */
export function fits(window: ContextWindow, tokens: number): boolean {
  return tokens + window.reserve <= window.limit;
}
