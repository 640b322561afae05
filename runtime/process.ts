import { existsSync } from "node:fs";

// The command line of every Brain process (Brain, the services, the kit's services): flags,
// a missing config file, stop signals and exit codes, said the same way everywhere.

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
