import { parseArgs } from "node:util";

/** What `brain COMMAND ARGUMENT [--FLAG VALUE …]` was asked: help, something it cannot do, or the argument and flags. */
export type CommandLine<Flag extends string> =
  | { help: true }
  | { help?: never; problem: string }
  | { help?: never; problem?: never; argument: string; flags: Partial<Record<Flag, string>> };

/**
 * Read a command line of exactly one argument (`what` names it in the problem: "URL",
 * "SESSION_ID"), the string `flags` and `--help`/`-h`, which wins over everything else.
 */
export function parseCommandLine<Flag extends string>(
  args: string[],
  what: string,
  flags: readonly Flag[],
): CommandLine<Flag> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(flags.map((flag) => [flag, { type: "string" as const }])),
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    return { problem: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [argument, ...extra] = positionals;
  if (argument === undefined || extra.length > 0) return { problem: `give exactly one ${what}` };
  const given: Partial<Record<Flag, string>> = {};
  for (const flag of flags) {
    const value = values[flag];
    if (typeof value === "string") given[flag] = value;
  }
  return { argument, flags: given };
}

/** Why `value` cannot be the http(s) URL a command was given, or undefined when it can. */
export function httpUrlProblem(value: string): string | undefined {
  return /^https?:\/\//i.test(value) && URL.canParse(value)
    ? undefined
    : `"${value}" is not an http or https URL`;
}
