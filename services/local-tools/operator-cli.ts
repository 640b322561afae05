import { request } from "undici";
import type { Approval } from "./approvals.js";

export interface OperatorTarget {
  /** The service's base URL. */
  url: string;
  token: string;
  tokenEnv: string;
}

type Call = { status: number; body: unknown } | { failure: string };

async function call(
  target: OperatorTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<Call> {
  try {
    const response = await request(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the status says enough
    }
    return { status: response.statusCode, body: parsed };
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    return { failure: `cannot reach local-tools at ${target.url} (${code}); is it running? (--url URL)` };
  }
}

function problem(target: OperatorTarget, result: Call): string {
  if ("failure" in result) return result.failure;
  if (result.status === 401) return `the service refused the operator token in ${target.tokenEnv}`;
  const error = (result.body as { error?: { message?: string } }).error;
  return error?.message ?? `the service answered ${result.status}`;
}

/** One line per approval waiting for a person. */
export function formatApproval(approval: Approval): string {
  return `${approval.id}  ${approval.tenant_id}/${approval.session_id}  expires ${approval.expires_at}  ${JSON.stringify(approval.question)}`;
}

export async function listApprovals(target: OperatorTarget, out: (line: string) => void): Promise<number> {
  const result = await call(target, "GET", "/operator/approvals");
  if ("failure" in result || result.status !== 200) {
    out(`local-tools: ${problem(target, result)}`);
    return 1;
  }
  const { approvals } = result.body as { approvals: Approval[] };
  if (approvals.length === 0) out("no approvals are waiting");
  for (const approval of approvals) out(formatApproval(approval));
  return 0;
}

export async function answerApproval(
  target: OperatorTarget,
  id: string,
  answer: "yes" | "no",
  by: string | undefined,
  out: (line: string) => void,
): Promise<number> {
  const result = await call(target, "POST", `/operator/approvals/${encodeURIComponent(id)}`, {
    answer,
    ...(by && { by }),
  });
  if ("failure" in result || result.status !== 200) {
    out(`local-tools: ${problem(target, result)}`);
    return 1;
  }
  out(`${id}: answered ${answer}`);
  return 0;
}
