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
}

// the room kept for an answer when the entry sets no max_tokens and the model may write more
const DEFAULT_RESERVE = 8192;

/**
 * The window of a model entry: its own numbers, else the documented ones of its model. A scripted
 * entry without `context_window` has none (its conversations are never compacted); a provider's
 * model that neither knows is a problem for `-check`.
 */
export function contextWindowOf(
  entry: ModelEntry,
): { window: ContextWindow | undefined } | { problem: string } {
  const known = entry.provider === "scripted" ? undefined : knownWindow(entry.provider, entry.model);
  const contextWindow = entry.context_window ?? known?.contextWindow;
  if (contextWindow === undefined) {
    if (entry.provider === "scripted") return { window: undefined };
    return {
      problem: `context_window: Brain does not know the window of model "${entry.model}"; set context_window (and max_output_tokens) in tokens, as its provider documents them`,
    };
  }
  const maxOutput = entry.max_output_tokens ?? known?.maxOutputTokens;
  const asked = entry.provider === "scripted" ? undefined : entry.max_tokens;
  const fallback = entry.provider === "anthropic" ? DEFAULT_MAX_TOKENS : DEFAULT_RESERVE;
  const reserve =
    entry.provider === "scripted"
      ? (maxOutput ?? 0)
      : Math.min(asked ?? fallback, maxOutput ?? Number.POSITIVE_INFINITY);
  const limit = Math.floor((entry.context?.threshold ?? DEFAULT_CONTEXT_THRESHOLD) * contextWindow);
  if (reserve >= limit) {
    return {
      problem: `context_window: ${contextWindow} tokens at threshold ${entry.context?.threshold ?? DEFAULT_CONTEXT_THRESHOLD} leave no room for the conversation beside an answer of ${reserve} tokens; lower max_tokens or raise the threshold`,
    };
  }
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

/** Whether a conversation of `tokens` leaves the answer its room within the window's limit. */
export function fits(window: ContextWindow, tokens: number): boolean {
  return tokens + window.reserve <= window.limit;
}
