import type { ToolResultObject } from "../../kit/index.js";
import type { ObjectInfo } from "./backend.js";
import type { StorageError } from "./errors.js";

/** An object's facts as results carry them. */
export function facts(info: ObjectInfo) {
  return { path: info.path, size: info.size, etag: info.etag, modified: info.modified.toISOString() };
}

export function describe(info: ObjectInfo): string {
  return `${info.path}: ${info.size} bytes, etag ${info.etag}, modified ${info.modified.toISOString()}`;
}

/**
 * A refusal as the model reads it, with its stable code in `structured_content.error.code`. Error
 * results are exempt from the output schema (docs/protocol.md), so the type fits any tool's result.
 */
export function errorResult(error: StorageError): ToolResultObject<never> {
  const result: ToolResultObject = {
    is_error: true,
    content: [{ type: "text", text: error.message }],
    structured_content: { error: { code: error.code, message: error.message }, ...error.details },
  };
  return result as ToolResultObject<never>;
}
