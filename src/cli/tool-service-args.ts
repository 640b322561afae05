import { envSecret, tokenProblem } from "../../runtime/secret.js";
import { httpUrlProblem, parseCommandLine } from "./command-line.js";

/** What `brain tools check|config URL [flags]` was asked: help, something it cannot do, or a service. */
export type ToolServiceArgs<Flag extends string> =
  | { help: true }
  | { help?: never; problem: string }
  | {
      help?: never;
      problem?: never;
      /** The URL as given: a tool's, a service's, or its tools' base path. */
      url: string;
      token: string;
      /** `--token-env` and the command's own string flags, when given; never `--token`'s secret. */
      flags: Omit<Partial<Record<Flag | "token-env" | "token", string>>, "token">;
    };

/**
 * The arguments every `brain tools` command takes: one http(s) URL and the service's token, from
 * `--token-env NAME` (preferred: it stays out of `ps` and shell history) or `--token VALUE`; and
 * the command's own string `flags`.
 */
export function parseToolServiceArgs<Flag extends string>(
  args: string[],
  flags: readonly Flag[],
  env: NodeJS.ProcessEnv,
): ToolServiceArgs<Flag> {
  const parsed = parseCommandLine(args, "URL", [...flags, "token-env", "token"]);
  if (parsed.help || parsed.problem !== undefined) return parsed;
  const { argument: url, flags: given } = parsed;
  const problem = httpUrlProblem(url);
  if (problem) return { problem };
  const { token: tokenFlag, ...rest } = given;
  const token = toolToken(tokenFlag, rest["token-env"], env);
  return "problem" in token ? token : { url, token: token.token, flags: rest };
}

function toolToken(
  given: string | undefined,
  tokenEnv: string | undefined,
  env: NodeJS.ProcessEnv,
): { token: string } | { problem: string } {
  if (given !== undefined && tokenEnv !== undefined) {
    return { problem: "pass --token-env or --token, not both" };
  }
  if (given !== undefined) {
    const problem = given === "" ? "must not be empty" : tokenProblem(given);
    return problem ? { problem: `--token ${problem}` } : { token: given };
  }
  const name = tokenEnv ?? "BRAIN_TOOLS_KEY";
  const read = envSecret(
    env,
    name,
    `the environment variable ${name} is not set; set it to the service's token, or pass --token-env NAME`,
  );
  return read.ok ? { token: read.secret.reveal() } : { problem: read.problem };
}
