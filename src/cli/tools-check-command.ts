import { compileToolSchema } from "../../protocol/tool-schemas.js";
import { checkToolService, formatOutcomes } from "../tools-check/check.js";
import { parseToolServiceArgs } from "./tool-service-args.js";
import { untilListening, waitSeconds } from "./wait-for-service.js";

const HELP = `brain tools check — check a tool service against the tool protocol

Usage:
  brain tools check URL [options]

URL is the tool's URL, as in a binding (http://127.0.0.1:8081/tools/echo). The check sends one
well-formed call as Brain does and judges the answer (status, content type, result object, event
stream framing, exactly one result), then sends the call without the token and with a wrong one
(each must get 401). It prints one line per rule,
PASS or FAIL and why, and exits 0 when every rule passes, 1 otherwise (2: bad usage).

Options:
  --token-env NAME          the environment variable holding the service's token (default BRAIN_TOOLS_KEY)
  --token VALUE             the token itself (visible in ps and shell history: prefer --token-env)
  --arguments JSON          the call's arguments, a JSON object (default {})
  --output-schema JSON      the binding's output_schema: a success's structured_content must match it
  --headers-timeout SECONDS response headers must come within this (default 30, as Brain)
  --timeout SECONDS         the whole call must finish within this (default 60)
  --max-output-bytes N      the result's size cap (default 1048576, as Brain)
  --wait SECONDS            keep trying for this long while nothing listens at URL yet, for a service
                            that is still starting (default 0: try once)
  -h, --help                this help`;

function usage(message: string): number {
  process.stderr.write(`brain tools check: ${message}\n\n${HELP}\n`);
  return 2;
}

function positiveNumber(raw: string | undefined, name: string, fallback: number): number | string {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : `${name} must be a positive number, not "${raw}"`;
}

/** An output_schema from the command line: JSON, an object schema, one that compiles; or why not. */
function objectSchema(text: string): Record<string, unknown> | string {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return "--output-schema must be valid JSON";
  }
  if (typeof schema !== "object" || schema === null || (schema as { type?: unknown }).type !== "object") {
    return '--output-schema must be an object schema ("type": "object")';
  }
  try {
    compileToolSchema(schema as Record<string, unknown>);
  } catch (error) {
    return `--output-schema does not compile: ${(error as Error).message}`;
  }
  return schema as Record<string, unknown>;
}

export async function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseToolServiceArgs(
    args,
    ["arguments", "output-schema", "headers-timeout", "timeout", "max-output-bytes", "wait"],
    env,
  );
  if (parsed.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (parsed.problem !== undefined) return usage(parsed.problem);
  const { url, token, flags } = parsed;
  let callArguments: unknown;
  try {
    callArguments = JSON.parse(flags.arguments ?? "{}");
  } catch {
    return usage("--arguments must be valid JSON");
  }
  if (typeof callArguments !== "object" || callArguments === null || Array.isArray(callArguments)) {
    return usage("--arguments must be a JSON object");
  }
  let outputSchema: Record<string, unknown> | undefined;
  if (flags["output-schema"] !== undefined) {
    const schema = objectSchema(flags["output-schema"]);
    if (typeof schema === "string") return usage(schema);
    outputSchema = schema;
  }
  const headersTimeout = positiveNumber(flags["headers-timeout"], "--headers-timeout", 30);
  const timeout = positiveNumber(flags.timeout, "--timeout", 60);
  const maxOutput = positiveNumber(flags["max-output-bytes"], "--max-output-bytes", 1_048_576);
  const wait = waitSeconds(flags.wait);
  for (const value of [headersTimeout, timeout, maxOutput, wait])
    if (typeof value === "string") return usage(value);

  const unreachable = await untilListening(new URL(url), wait as number, (line) =>
    process.stderr.write(`${line}\n`),
  );
  if (unreachable) {
    process.stderr.write(`brain tools check: ${unreachable}\n`);
    return 1;
  }

  const outcomes = await checkToolService(url, {
    token,
    arguments: callArguments as Record<string, unknown>,
    ...(outputSchema && { outputSchema }),
    headersTimeoutMs: (headersTimeout as number) * 1000,
    callTimeoutMs: (timeout as number) * 1000,
    maxOutputBytes: maxOutput as number,
  });
  process.stdout.write(`${url}\n${formatOutcomes(outcomes)}\n`);
  return outcomes.every((outcome) => outcome.pass) ? 0 : 1;
}
