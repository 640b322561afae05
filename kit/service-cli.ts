import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Logger } from "pino";
import { missingDefaultConfig, normalizeFlags, runMain, stopSignal } from "../runtime/process.js";

/** What a config file gave: the resolved config, or every problem found, one line each. */
export type ConfigResult<Config> = { ok: true; config: Config } | { ok: false; problems: string[] };

/** A started service, as its command line stops it. */
export interface StoppableService {
  logger: Pick<Logger, "info" | "flush">;
  close(): Promise<void>;
}

/** What a service's own command (`NAME approvals`, say) is given. */
export interface SubcommandContext {
  /** The words after the command's name. */
  args: string[];
  /** The config file (the default when none was named) and the values of `stringFlags`. */
  flags: { config: string } & Record<string, string | undefined>;
  /** Print `message` and the help to stderr; returns 2, the exit code of bad usage. */
  usage: (message: string) => number;
}

export interface ServiceCommand<Config> {
  /** The command's name, the prefix of its messages. */
  name: string;
  help: string;
  /** The config file when the command line names none. */
  defaultConfig: string;
  load: (path: string) => ConfigResult<Config> | Promise<ConfigResult<Config>>;
  /** What `-check` adds to loading: further problems, or what to print after "PATH: valid". */
  check?: (config: Config) => { ok: true; summary?: string } | { ok: false; problems: string[] };
  /** Start serving; a thrown error is printed as "NAME: not started: …", exit 1. */
  start: (config: Config) => Promise<StoppableService>;
  /** Commands besides serving, by name: `NAME COMMAND ARGS… [flags]`. */
  commands?: Record<string, (context: SubcommandContext) => Promise<number>>;
  /** Further string flags (`--url`), for the commands. */
  stringFlags?: readonly string[];
}

/**
 * A tool service's command line: `NAME [-config FILE]` serves until SIGINT or SIGTERM, then
 * closes; `-check` validates the config and exits 0, or 2 with one problem per line, each after
 * the file's path; `--help`; the service's own `commands`. Flags take one dash or two. Exit codes:
 * 0 done, 1 not started, 2 bad usage or a bad config.
 */
export function runServiceCommand<Config>(command: ServiceCommand<Config>): void {
  runMain(command.name, (argv) => serviceMain(command, argv));
}

async function serviceMain<Config>(command: ServiceCommand<Config>, argv: string[]): Promise<number> {
  const usage = (message: string) => {
    process.stderr.write(`${command.name}: ${message}\n\n${command.help}\n`);
    return 2;
  };
  const options: ParseArgsConfig["options"] = {
    config: { type: "string", short: "c" },
    check: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  };
  for (const flag of command.stringFlags ?? []) options[flag] = { type: "string" };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: normalizeFlags(argv), options, allowPositionals: true });
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  const flags: SubcommandContext["flags"] = { config: command.defaultConfig };
  for (const [flag, value] of Object.entries(values)) if (typeof value === "string") flags[flag] = value;
  const [name, ...args] = positionals;
  if (name !== undefined) {
    // own properties only: `constructor` is an unknown command, not Object's constructor
    const subcommand =
      command.commands && Object.hasOwn(command.commands, name) ? command.commands[name] : undefined;
    return subcommand ? subcommand({ args, flags, usage }) : usage(`unknown command "${name}"`);
  }

  const missing = values.config === undefined && missingDefaultConfig(command.name, command.defaultConfig);
  if (missing) {
    process.stderr.write(`${missing}\n`);
    return 2;
  }
  const path = flags.config;
  const printProblems = (problems: readonly string[]) => {
    for (const problem of problems) process.stderr.write(`${path}: ${problem}\n`);
  };
  const loaded = await command.load(path);
  if (!loaded.ok) {
    printProblems(loaded.problems);
    if (!values.check) {
      const count = loaded.problems.length;
      process.stderr.write(
        `${path}: ${count} problem${count === 1 ? "" : "s"}; ${command.name} did not start\n`,
      );
    }
    return 2;
  }
  if (values.check) {
    const checked = command.check?.(loaded.config) ?? { ok: true };
    if (!checked.ok) {
      printProblems(checked.problems);
      return 2;
    }
    process.stdout.write(`${path}: valid${checked.summary ? ` (${checked.summary})` : ""}\n`);
    return 0;
  }
  let service: StoppableService;
  try {
    service = await command.start(loaded.config);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // a list of problems goes one per line, below the heading
    process.stderr.write(`${command.name}: not started:${message.includes("\n") ? "\n" : " "}${message}\n`);
    return 1;
  }
  await stopSignal();
  service.logger.info("stopping");
  await service.close();
  service.logger.flush();
  return 0;
}
