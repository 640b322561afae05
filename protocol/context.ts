/** How a model entry keeps a long conversation inside its window: a summary, or the oldest turns left out. */
export const CONTEXT_STRATEGIES = ["compact", "truncate"] as const;
export type ContextStrategy = (typeof CONTEXT_STRATEGIES)[number];
