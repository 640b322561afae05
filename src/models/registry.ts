import type { ModelEntry } from "../config/schema.js";
import { ModelError, type ModelProvider } from "./provider.js";
import { ScriptedModel } from "./scripted.js";

/** One provider instance per model entry, made when Brain starts. */
export function createModelProvider(entry: ModelEntry): ModelProvider {
  switch (entry.provider) {
    case "scripted":
      return new ScriptedModel(entry.script);
    case "anthropic":
    case "openai":
      return {
        complete: async () => {
          throw new ModelError(
            "provider_unavailable",
            `the ${entry.provider} provider is not available in this build`,
          );
        },
      };
  }
}
