import { type OutcomeCode, UNKNOWN_OUTCOME } from "../../protocol/outcomes.js";
import type { ToolResult } from "../../protocol/result.js";

/** How a call failed, and from that whether the tool may have done the work. */
export class ToolFailure {
  constructor(
    readonly code: OutcomeCode,
    readonly message: string,
    /** Only for `http_status`: a 5xx may have done the work, a 4xx refused it. */
    readonly status?: number,
    /** False for a call that was never sent (cancelled while it waited): the tool did not run. */
    readonly sent = true,
  ) {}

  /** A failure of a call that was never sent: whatever its code, the tool did not run. */
  static unsent(code: OutcomeCode, message: string): ToolFailure {
    return new ToolFailure(code, message, undefined, false);
  }

  get unknownOutcome(): boolean {
    if (!this.sent) return false;
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
