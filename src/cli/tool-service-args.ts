import { parseArgs } from "node:util";

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
      /** `--token-env` and the command's own string flags, when given. */
      flags: Partial<Record<Flag | "token-env", string>>;
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
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(flags.map((flag) => [flag, { type: "string" as const }])),
        "token-env": { type: "string" },
        token: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    return { problem: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [url, ...extra] = positionals;
  if (url === undefined || extra.length > 0) return { problem: "give exactly one URL" };
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url))
    return { problem: `"${url}" is not an http or https URL` };
  const given: Partial<Record<Flag | "token-env", string>> = {};
  for (const flag of [...flags, "token-env" as const]) {
    const value = values[flag];
    if (typeof value === "string") given[flag] = value;
  }
  const token = toolToken(values.token as string | undefined, given["token-env"], env);
  return "problem" in token ? token : { url, token: token.token, flags: given };
}

function toolToken(
  given: string | undefined,
  tokenEnv: string | undefined,
  env: NodeJS.ProcessEnv,
): { token: string } | { problem: string } {
  if (given !== undefined && tokenEnv !== undefined) {
    return { problem: "pass --token-env or --token, not both" };
  }
  if (given !== undefined) return given === "" ? { problem: "--token must not be empty" } : { token: given };
  const name = tokenEnv ?? "BRAIN_TOOLS_KEY";
  const token = env[name];
  if (!token) {
    return {
      problem: `the environment variable ${name} is not set; set it to the service's token, or pass --token-env NAME`,
    };
  }
  return { token };
}
