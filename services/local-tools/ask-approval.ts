import { Type } from "@sinclair/typebox";
import { defineTool, type Tool, ToolError } from "../../kit/index.js";
import { type ApprovalStore, TooManyPending } from "./approvals.js";

export interface AskApprovalOptions {
  defaultTimeoutSeconds: number;
  maxTimeoutSeconds: number;
  progressMs: number;
  maxPending: number;
  maxPendingPerTenant: number;
  maxQuestionChars: number;
}

const ANSWERED: Record<"yes" | "no", string> = {
  yes: "Operator answered yes.",
  no: "Operator answered no.",
};

/**
 * `ask_approval`: asks a person a yes/no question and waits for the answer, streaming
 * `{"status":"waiting_for_operator","approval_id"}` while it waits. People answer on the operator
 * page or with `local-tools answer`.
 */
export function askApprovalTool(store: ApprovalStore, options: AskApprovalOptions): Tool {
  return defineTool({
    name: "ask_approval",
    description:
      "Ask a person to approve an action and wait for their yes or no. Ask before anything irreversible. " +
      "A timeout means no one answered: treat it as not approved.",
    input: Type.Object(
      {
        question: Type.String({
          minLength: 1,
          maxLength: options.maxQuestionChars,
          description: "What to approve, in words a person can decide on.",
        }),
        timeout_seconds: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            maximum: options.maxTimeoutSeconds,
            description: `How long to wait for an answer (default ${options.defaultTimeoutSeconds}).`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    output: Type.Object(
      {
        approval_id: Type.String(),
        answer: Type.Union([Type.Literal("yes"), Type.Literal("no"), Type.Literal("timeout")]),
      },
      { additionalProperties: false },
    ),
    streaming: true,
    timeoutSeconds: Math.min(86_400, Math.ceil(options.maxTimeoutSeconds) + 30),
    handler: async ({ question, timeout_seconds }, ctx) => {
      const timeoutSeconds = timeout_seconds ?? options.defaultTimeoutSeconds;
      let approval: ReturnType<ApprovalStore["open"]>;
      try {
        approval = store.open({
          tenant_id: ctx.tenant_id,
          session_id: ctx.session_id,
          call_id: ctx.call_id,
          question,
          timeoutMs: timeoutSeconds * 1000,
          maxPending: options.maxPending,
          maxPendingPerTenant: options.maxPendingPerTenant,
        });
      } catch (error) {
        if (error instanceof TooManyPending) throw new ToolError(error.message);
        throw error;
      }
      try {
        const waiting = {
          status: "waiting_for_operator",
          approval_id: approval.id,
          expires_at: approval.expires_at,
        };
        if (approval.status === "pending") ctx.progress(waiting);
        const repeat = setInterval(() => ctx.progress(waiting), options.progressMs);
        const settled = await store.waitFor(approval, ctx.signal).finally(() => clearInterval(repeat));
        if (settled === "aborted") {
          // the question stays open: a person may still answer, and asking again collects it
          const reason =
            ctx.signal.reason instanceof Error ? ctx.signal.reason.message : "the wait was cut short";
          ctx.log.info({ approval_id: approval.id, reason }, "stopped waiting for an operator");
          throw new ToolError(
            `No answer yet: ${reason}. Approval ${approval.id} stays open; ask the same question again to collect the answer.`,
            { approval_id: approval.id, answer: "pending" },
          );
        }
        store.markDelivered(approval.id);
        if (settled === "expired") {
          const waited =
            Math.round((Date.parse(approval.expires_at) - Date.parse(approval.created_at)) / 100) / 10;
          return {
            content: [
              {
                type: "text",
                text: `No operator answered within ${waited} seconds. Treat this as not approved.`,
              },
            ],
            structured_content: { approval_id: approval.id, answer: "timeout" as const },
          };
        }
        return {
          content: [{ type: "text", text: ANSWERED[settled] }],
          structured_content: { approval_id: approval.id, answer: settled },
        };
      } finally {
        // after markDelivered: an answer this call received must not go to the next one
        store.release(approval.id);
      }
    },
  });
}
