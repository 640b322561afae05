import type { ModelConfig, ToolBinding } from "../config/load.js";
import { DEFAULT_MAX_MODEL_BYTES } from "../config/schema.js";
import type { ContextMeasure } from "./history.js";
import { resultForModel } from "./result-for-model.js";
import { tokenCounter } from "./tokens.js";

/** How the conversations of a model entry's sessions are measured, and their results cut per binding. */
export async function contextMeasure(
  model: ModelConfig | undefined,
  tools: ReadonlyMap<string, ToolBinding>,
): Promise<ContextMeasure> {
  return {
    counter: await tokenCounter(model?.provider ?? "scripted"),
    // a result of a tool no longer bound is cut as any binding's would be by default
    forModel: (result) =>
      resultForModel(result, tools.get(result.name)?.maxModelBytes ?? DEFAULT_MAX_MODEL_BYTES),
  };
}
