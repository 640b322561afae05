/** A model's context window and longest answer, in tokens, as its provider documents them. */
export interface ModelWindow {
  contextWindow: number;
  maxOutputTokens: number;
}

/**
 * The providers' current models, by name prefix: a dated or suffixed name ("gpt-4o-mini-2024-07-18",
 * "claude-sonnet-4-5-20250929") takes the entry of its longest matching prefix. A model not here
 * needs `context_window` in its entry (the README's "Context window" lists these).
 */
const KNOWN: Record<"anthropic" | "openai", Record<string, ModelWindow>> = {
  anthropic: {
    "claude-opus-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000 },
    "claude-opus-4": { contextWindow: 200_000, maxOutputTokens: 32_000 },
    "claude-sonnet-4": { contextWindow: 200_000, maxOutputTokens: 64_000 },
    "claude-haiku-4": { contextWindow: 200_000, maxOutputTokens: 64_000 },
    "claude-3-7-sonnet": { contextWindow: 200_000, maxOutputTokens: 64_000 },
    "claude-3-5-haiku": { contextWindow: 200_000, maxOutputTokens: 8_192 },
  },
  openai: {
    "gpt-5": { contextWindow: 400_000, maxOutputTokens: 128_000 },
    "gpt-4.1": { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
    "gpt-4o": { contextWindow: 128_000, maxOutputTokens: 16_384 },
    o3: { contextWindow: 200_000, maxOutputTokens: 100_000 },
    "o4-mini": { contextWindow: 200_000, maxOutputTokens: 100_000 },
  },
};

/** The documented window of a provider's model, or undefined when Brain does not know it. */
export function knownWindow(provider: "anthropic" | "openai", model: string): ModelWindow | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(KNOWN[provider])) {
    const matches = model === prefix || model.startsWith(`${prefix}-`);
    if (matches && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : KNOWN[provider][best];
}
