import { checkResultObject, type ResultObject } from "../protocol/result.js";
import type { Tool, ToolResultObject, ToolReturn } from "./tool.js";

/** A success result with one text item. */
export function textResult(text: string): ResultObject {
  return { content: [{ type: "text", text }] };
}

/** An error result the model reads: `is_error` with one text item. */
export function errorResult(text: string): ResultObject {
  return { is_error: true, content: [{ type: "text", text }] };
}

/**
 * Throw it from a handler to choose the error result exactly (its text and structured content);
 * any other thrown error becomes an error result with the error's message.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly structured?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ToolError";
  }
}

/**
 * Throw it from a handler when the work may or may not have been done and no result can say which
 * (the process it forwarded the call to died mid-call). The kit then closes the connection without
 * a result, so Brain records the call as for any connection lost mid-call: `connection_lost`, with
 * `unknown_outcome`.
 */
export class OutcomeUnknown extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutcomeUnknown";
  }
}

/** The error result for whatever a handler threw. */
export function thrownToResult(tool: Tool, thrown: unknown): ResultObject {
  if (thrown instanceof ToolError) {
    const result = errorResult(thrown.message);
    if (thrown.structured) result.structured_content = thrown.structured;
    return result;
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return errorResult(`${tool.name} failed: ${message || "an error without a message"}`);
}

/**
 * What a handler returned, as the result object to send. A return that breaks the protocol
 * becomes an error result naming the problem, so Brain never has to reject the answer as
 * invalid_result and the model still learns what went wrong.
 */
export function returnedToResult(
  tool: Tool,
  returned: ToolReturn<unknown>,
): {
  result: ResultObject;
  problem?: string;
} {
  const raw: ToolResultObject<unknown> =
    typeof returned === "string" ? textResult(returned) : (returned as ToolResultObject<unknown>);
  const checked = checkResultObject(raw, tool.validateOutput);
  if ("problem" in checked) {
    return {
      result: errorResult(`${tool.name} returned a result that breaks the tool protocol: ${checked.problem}`),
      problem: checked.problem,
    };
  }
  return { result: raw as ResultObject };
}
