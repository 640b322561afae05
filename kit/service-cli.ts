import { existsSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Logger } from "pino";

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

/** Go's flag package style (-config) and GNU style (--config) are both accepted. */
export function normalizeFlags(args: readonly string[]): string[] {
  return args.map((arg) => (/^-[a-z][a-z-]+(=.*)?$/.test(arg) ? `-${arg}` : arg));
}

/**
 * What to say when a command line names no config file and the default one is not in the current
 * directory, or undefined when it is there: a bare "cannot read NAME.json: ENOENT" tells a new
 * user neither the flag nor where to look.
 */
export function missingDefaultConfig(name: string, defaultConfig: string): string | undefined {
  if (existsSync(defaultConfig)) return undefined;
  return `${name}: no config file named, and there is no ${defaultConfig} in ${process.cwd()}: name one with -config FILE (${name} --help says more)`;
}

/** How often a server started by npm looks whether the process that started it is still there. */
const PARENT_CHECK_MS = 250;
/** Taken at start: a parent gone while the server was still starting counts too. */
const STARTED_BY = process.ppid;

/**
 * Resolves on the first SIGINT or SIGTERM: how a server is told to stop. A server started by npm
 * (`npx brain …`, an npm script; npm sets `npm_lifecycle_event`) also stops when the process that
 * started it is gone: `kill` of npx's pid reaches npm, which passes the signal only to the shell
 * it runs the command in, and that shell dies of it without passing it on, leaving the server
 * running with its port and its store.
 */
export function stopSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    let parentCheck: NodeJS.Timeout | undefined;
    const stop = () => {
      clearInterval(parentCheck);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    if (process.env.npm_lifecycle_event === undefined) return;
    // an orphan is adopted by init or a subreaper: its parent id changes
    const orphaned = () => process.ppid !== STARTED_BY;
    if (orphaned()) return stop();
    parentCheck = setInterval(() => {
      if (orphaned()) stop();
    }, PARENT_CHECK_MS);
    parentCheck.unref();
  });
}

/**
 * Run a command's `main` on the process's arguments. Its number becomes the exit code; a thrown
 * error is printed as "NAME: message" with exit code 1. The exit code is set, not forced, so
 * output still being written is not cut off.
 */
export function runMain(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
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
    const subcommand = command.commands?.[name];
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
