#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { missingDefaultConfig, normalizeFlags, runMain, stopSignal } from "../../runtime/process.js";
import { loadConfigFile } from "../config/load.js";
import { COMMANDS } from "./commands.js";

const DEFAULT_CONFIG = "brain.json";
const USAGE: [string, string][] = [
  ["brain [-config FILE]", `start Brain with the host config FILE (default: ${DEFAULT_CONFIG})`],
  ["brain -config FILE -check", "validate FILE and exit: 0 when valid, 2 with one problem per line"],
  ...Object.values(COMMANDS).map((command): [string, string] => [command.usage, command.summary]),
  ["brain --version | --help", ""],
];
const usageWidth = Math.max(...USAGE.map(([usage]) => usage.length)) + 2;

const HELP = `brain — an agent server

Usage:
${USAGE.map(([usage, summary]) => `  ${usage.padEnd(usageWidth)}${summary}`.trimEnd()).join("\n")}

Flags take one dash or two: -config and --config are the same.
Secrets are never in the config: it names the environment variables that hold them.`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

async function main(argv: string[]): Promise<number> {
  // own properties only: `brain constructor` is an unknown command, not Object's constructor
  const command = argv[0] !== undefined && Object.hasOwn(COMMANDS, argv[0]) ? COMMANDS[argv[0]] : undefined;
  if (command) return (await command.load()).run(argv.slice(1));

  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(normalizeFlags(argv));
  } catch (error) {
    process.stderr.write(`brain: ${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`brain ${version()}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    process.stderr.write(`brain: unknown command "${positionals[0]}"\n\n${HELP}\n`);
    return 2;
  }

  const missing = values.config === undefined && missingDefaultConfig("brain", DEFAULT_CONFIG);
  if (missing) {
    process.stderr.write(`${missing}\n`);
    return 2;
  }
  const path = values.config ?? DEFAULT_CONFIG;
  const loaded = loadConfigFile(path);
  if (!loaded.ok) {
    for (const problem of loaded.problems) process.stderr.write(`${problem}\n`);
    const count = loaded.problems.length;
    // a check was asked whether the file is valid, not to start anything
    const outcome = values.check ? "" : "; Brain did not start";
    process.stderr.write(`${path}: ${count} problem${count === 1 ? "" : "s"}${outcome}\n`);
    return 2;
  }
  const { config } = loaded;
  if (values.check) {
    // a store Brain could not open is as much a problem of the config as a bad field
    if (config.store.kind === "postgres") {
      const { postgresProblem } = await import("../store/postgres/open.js");
      const problem = await postgresProblem(config.store.url.reveal(), config.store.urlEnv);
      if (problem) {
        process.stderr.write(`store.url_env: ${problem}\n${path}: 1 problem\n`);
        return 2;
      }
    }
    process.stdout.write(
      `${path}: valid (${config.tenants.length} tenants, ${config.models.size} models, ${config.tools.size} tools)\n`,
    );
    return 0;
  }

  // loaded only to serve: -check and the other commands start faster without the server's modules
  const { startBrain } = await import("../brain.js").catch((error: unknown) => {
    throw withoutServerDependencies(error) ?? error;
  });
  const brain = await startBrain(config);
  await stopSignal();
  brain.logger.info("stopping");
  await brain.close();
  return 0;
}

/**
 * The server's dependencies are the package's optional ones, which an install for the kit or the
 * client alone leaves out (`npm install --omit=optional`): say so instead of Node's module error.
 */
function withoutServerDependencies(error: unknown): Error | undefined {
  if ((error as { code?: unknown })?.code !== "ERR_MODULE_NOT_FOUND") return undefined;
  const missing = /Cannot find package '([^']+)'/.exec((error as Error).message)?.[1] ?? "a dependency";
  return new Error(
    `Brain's server needs the package's optional dependencies, and ${missing} is not installed: install brain again without --omit=optional`,
  );
}

function parseOptions(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      check: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
}

runMain("brain", main);
