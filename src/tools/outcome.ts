import type { ToolResult } from "./result.js";

/** The failure codes of DESIGN §6. They are API: clients and models branch on them. */
export type OutcomeCode =
  | "invalid_arguments"
  | "unknown_tool"
  | "unreachable"
  | "http_status"
  | "redirect"
  | "headers_timeout"
  | "timeout"
  | "connection_lost"
  | "invalid_result"
  | "output_too_large"
  | "cancelled"
  | "brain_restarted";

/** Whether the tool may have done the work, by code; `http_status` depends on the status (below). */
const UNKNOWN_OUTCOME: Record<Exclude<OutcomeCode, "http_status">, boolean> = {
  invalid_arguments: false,
  unknown_tool: false,
  unreachable: false,
  redirect: true,
  headers_timeout: true,
  timeout: true,
  connection_lost: true,
  invalid_result: true,
  output_too_large: true,
  cancelled: true,
  brain_restarted: true,
};

/** A failure for a code whose outcome does not depend on anything else. */
export class ToolFailure {
  constructor(
    readonly code: OutcomeCode,
    readonly message: string,
    /** Only for `http_status`: a 5xx may have done the work, a 4xx refused it. */
    readonly status?: number,
  ) {}

  get unknownOutcome(): boolean {
    if (this.code === "http_status") return (this.status ?? 500) >= 500;
    return UNKNOWN_OUTCOME[this.code];
  }

  toResult(): ToolResult {
    const unknown = this.unknownOutcome;
    const advice = unknown
      ? "The tool may have done the work anyway: check its effect before calling it again."
      : "The tool did not run.";
    return {
      is_error: true,
      content: [{ type: "text", text: `Tool call failed (${this.code}): ${this.message} ${advice}` }],
      unknown_outcome: unknown,
      error: { code: this.code, message: this.message },
    };
  }
}
