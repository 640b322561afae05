import type { ModelConfig } from "../config/load.js";
import type { RetryPolicy } from "./retry.js";

type ProviderConfig = Extract<ModelConfig, { provider: "anthropic" | "openai" }>;

export interface ProviderSettings {
  /** The longest silence from the provider: before its response starts, or between two events. */
  idleMs: number;
  retry: RetryPolicy;
}

// the official SDKs' defaults: 10 minutes, 2 retries
export const DEFAULT_TIMEOUT_SECONDS = 600;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_RETRY_WAIT_SECONDS = 60;

export function providerSettings(config: ProviderConfig): ProviderSettings {
  return {
    idleMs: Math.max(1, Math.round((config.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000)),
    retry: {
      maxRetries: config.max_retries ?? DEFAULT_MAX_RETRIES,
      maxWaitMs: Math.round((config.max_retry_wait_seconds ?? DEFAULT_MAX_RETRY_WAIT_SECONDS) * 1000),
    },
  };
}
