import type { ModelConfig } from "../config/load.js";
import type { Logger } from "../telemetry/logger.js";
import { AnthropicModel } from "./anthropic.js";
import { OpenAIModel } from "./openai.js";
import type { ModelProvider } from "./provider.js";
import { ScriptedModel } from "./scripted.js";

/** One provider instance per model entry, made when Brain starts. */
export function createModelProvider(entry: ModelConfig, options: { logger?: Logger } = {}): ModelProvider {
  switch (entry.provider) {
    case "scripted":
      return new ScriptedModel(entry.script);
    case "anthropic":
      return new AnthropicModel(entry, options.logger);
    case "openai":
      return new OpenAIModel(entry, options.logger);
  }
}
