import type { ToolContext, ToolResultObject } from "../../kit/index.js";
import type { ResultCache } from "./cache.js";
import type { WebError } from "./errors.js";

/** Beyond a tool's own time limit: reading what came (a PDF, a large page) and the way back to Brain. */
export const CALL_MARGIN_SECONDS = 30;

/**
 * A refusal as the model reads it, with its stable code in `structured_content.error.code`. Error
 * results are exempt from the output schema (docs/protocol.md), so the type fits any tool's result.
 */
export function errorResult(error: WebError): ToolResultObject<never> {
  const result: ToolResultObject = {
    is_error: true,
    content: [{ type: "text", text: error.message }],
    structured_content: { error: { code: error.code, message: error.message }, ...error.details },
  };
  return result as ToolResultObject<never>;
}

/** A success as the cache keeps it: the text and the structured content. */
export type Cached<S> = { text: string; structured: S };

/** A success kept for the tenant, marked as from the cache when it is served again. */
export async function throughCache<S extends { cached: boolean }>(
  cache: ResultCache<Cached<S>>,
  ctx: ToolContext,
  key: string,
  produce: () => Promise<Cached<S> | ToolResultObject<never>>,
): Promise<ToolResultObject<S>> {
  const hit = cache.get(ctx.tenant_id, key);
  if (hit) {
    const note = `(from the cache: fetched ${new Date(hit.at).toISOString()})`;
    return {
      content: [{ type: "text", text: `${note}\n${hit.value.text}` }],
      structured_content: { ...hit.value.structured, cached: true },
    };
  }
  const produced = await produce();
  if (!("structured" in produced)) return produced;
  cache.set(ctx.tenant_id, key, produced);
  return { content: [{ type: "text", text: produced.text }], structured_content: produced.structured };
}
