import { randomBytes } from "node:crypto";
import { type ToolManifest, ToolManifestSchema } from "../../protocol/manifest.js";
import { compileToolSchema } from "../../protocol/tool-schemas.js";
import { check, compile } from "../../protocol/validation.js";
import { percentDecoded } from "../../runtime/percent-decoding.js";
import { type ExchangeOptions, exchange } from "./exchange.js";
import { type Observation, TOOL_SERVICE_RULES } from "./rules.js";

export interface CheckOptions {
  /** The bearer token the service expects; the checker never prints it. */
  token: string;
  /** The call's `arguments`. */
  arguments: Record<string, unknown>;
  /** The binding's output_schema: a success result's structured_content must match it. */
  outputSchema?: Record<string, unknown>;
  headersTimeoutMs?: number;
  callTimeoutMs?: number;
  maxOutputBytes?: number;
  maxProgressBytes?: number;
  afterResultMs?: number;
}

export interface RuleOutcome {
  id: string;
  says: string;
  pass: boolean;
  why: string;
}

const id = (prefix: string) => `${prefix}_check_${randomBytes(8).toString("hex")}`;

/** Call the tool at `url` as Brain does, plus two calls it must refuse, and judge every rule. */
export async function checkToolService(url: string, options: CheckOptions): Promise<RuleOutcome[]> {
  const callId = id("call");
  const body = JSON.stringify({
    tenant_id: "brain-tools-check",
    session_id: id("ses"),
    call_id: callId,
    arguments: options.arguments,
  });
  const base: Omit<ExchangeOptions, "headers" | "body"> = {
    headersTimeoutMs: options.headersTimeoutMs ?? 30_000,
    callTimeoutMs: options.callTimeoutMs ?? 60_000,
    maxOutputBytes: options.maxOutputBytes ?? 1_048_576,
    maxProgressBytes: options.maxProgressBytes ?? 65_536,
    afterResultMs: options.afterResultMs ?? 1_000,
  };
  const headers = (token: string | undefined) => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "idempotency-key": callId,
    ...(token !== undefined && { authorization: `Bearer ${token}` }),
  });
  // one at a time: a service that serializes calls must not fail a rule for it
  const call = await exchange(url, { ...base, headers: headers(options.token), body });
  // sent twice only where the service says the second does nothing
  const repeat = (await saysIdempotent(url, options.token))
    ? await exchange(url, { ...base, headers: headers(options.token), body })
    : undefined;
  const seen: Observation = {
    validateOutput: options.outputSchema && compileToolSchema(options.outputSchema),
    call,
    repeat,
    noToken: await exchange(url, { ...base, headers: headers(undefined), body }),
    wrongToken: await exchange(url, {
      ...base,
      headers: headers(`wrong-${randomBytes(16).toString("hex")}`),
      body,
    }),
  };
  return TOOL_SERVICE_RULES.map((rule) => ({ id: rule.id, says: rule.says, ...rule.judge(seen) }));
}

const validateManifest = compile<ToolManifest>(ToolManifestSchema);

/**
 * Whether the service's tool list (a GET of the tool URL's parent, docs/protocol.md) says the tool
 * is idempotent. A service without a tool list says nothing.
 */
async function saysIdempotent(url: string, token: string): Promise<boolean> {
  const parsed = new URL(url);
  // a broken percent-escape names no tool of any list (the call itself is judged as sent)
  const name = percentDecoded(parsed.pathname.split("/").at(-1) ?? "");
  if (name === undefined) return false;
  parsed.pathname = parsed.pathname.replace(/\/[^/]*$/, "");
  try {
    const response = await fetch(parsed, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      signal: AbortSignal.timeout(5000),
    });
    if (!response.ok) return false;
    const checked = check(validateManifest, await response.json());
    return checked.ok && checked.value.tools.some((tool) => tool.name === name && tool.idempotent === true);
  } catch {
    return false;
  }
}

/** One line per rule: `PASS  status        answered 200, headers after 3 ms`. */
export function formatOutcomes(outcomes: readonly RuleOutcome[]): string {
  const width = Math.max(...outcomes.map((outcome) => outcome.id.length));
  const lines = outcomes.map(
    (outcome) => `${outcome.pass ? "PASS" : "FAIL"}  ${outcome.id.padEnd(width)}  ${outcome.why}`,
  );
  const failed = outcomes.filter((outcome) => !outcome.pass).length;
  lines.push(
    failed === 0 ? `all ${outcomes.length} rules pass` : `${failed} of ${outcomes.length} rules fail`,
  );
  return lines.join("\n");
}
