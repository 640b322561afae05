/**
 * Why a model call failed for good, the same for every provider: a provider's answer judged (the
 * provider_* codes), or the scripted model's own.
 */
export const MODEL_FAILURE_CODES = [
  "provider_rate_limited",
  "provider_overloaded",
  "provider_server_error",
  "provider_timeout",
  "provider_unreachable",
  "provider_connection_lost",
  "provider_auth_failed",
  "provider_rejected",
  "provider_bad_response",
  "provider_error",
  /** The conversation passed the model's context window, and compacting it once did not help. */
  "context_exceeded",
  "model_error",
  "script_exhausted",
] as const;

/**
 * Why a turn ended `turn.failed`: its `error.code`. They are API: clients branch on them, never on
 * the message.
 */
export const TURN_FAILURE_CODES = [
  ...MODEL_FAILURE_CODES,
  /** The session's model is no longer in the host config. */
  "unknown_model",
  /** The model asked for more tool calls at once than Brain sends. */
  "too_many_tool_calls",
  /** Brain (or, with many instances, the turn's owner) stopped during the turn. */
  "brain_restarted",
  /** The store could not be reached long enough that the turn could not go on. */
  "store_unavailable",
  /** The turn used more tokens than its budget (`limits.max_tokens_per_turn`, the session's `max_tokens`). */
  "budget_exhausted",
  /** Brain's own failure; its log has it. */
  "internal_error",
] as const;

export type ModelFailureCode = (typeof MODEL_FAILURE_CODES)[number];
export type ProviderFailureCode = Extract<ModelFailureCode, `provider_${string}` | "context_exceeded">;
export type TurnFailureCode = (typeof TURN_FAILURE_CODES)[number];
