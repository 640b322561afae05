import type { ToolManifest } from "../protocol/manifest.js";
import type { Tool } from "./tool.js";

/** The tool list a service built with the kit answers, from its tools. */
export function manifestOf(tools: Iterable<Tool>): ToolManifest {
  return {
    tools: [...tools].map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
      ...(tool.outputSchema && { output_schema: tool.outputSchema }),
      ...(tool.timeoutSeconds !== undefined && { timeout_seconds: tool.timeoutSeconds }),
      ...(tool.idempotent && { idempotent: true }),
    })),
  };
}
