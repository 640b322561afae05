import type { ModelConfig } from "../config/load.js";
import type { Logger } from "../telemetry/logger.js";
import type { ModelProvider } from "./provider.js";
import { ScriptedModel } from "./scripted.js";

/**
 * One provider instance per model entry, made when Brain starts. The SDK-backed providers are
 * imported only when a model entry names them: a Brain without them starts without loading the
 * Anthropic and OpenAI SDKs (a third of its start-up time).
 */
export async function createModelProvider(
  entry: ModelConfig,
  options: { logger?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<ModelProvider> {
  switch (entry.provider) {
    case "scripted":
      return new ScriptedModel(entry.script);
    case "anthropic": {
      const { AnthropicModel } = await import("./anthropic.js");
      return new AnthropicModel(entry, options.logger, options.env);
    }
    case "openai": {
      const { OpenAIModel } = await import("./openai.js");
      return new OpenAIModel(entry, options.logger, options.env);
    }
  }
}
