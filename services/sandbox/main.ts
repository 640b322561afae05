#!/usr/bin/env node
import { parseArgs } from "node:util";
import { loadSandboxConfig } from "./config.js";
import { layoutOf, StartupError } from "./sandbox.js";
import { startSandboxService } from "./service.js";

const HELP = `sandbox — Brain's sandbox tool service: run code under bubblewrap in a per-session workspace

Usage:
  sandbox [-config FILE]          start the service (default config: sandbox.json)
  sandbox -config FILE -check     validate FILE and exit: 0 when valid, 2 with one problem per line
  sandbox --help

Tools: sandbox_exec, sandbox_start, sandbox_status, sandbox_cancel, sandbox_write_file,
sandbox_read_file, sandbox_list, at http://LISTEN/tools/NAME. Runs as root (each workspace runs as
a host user of its own, never root) and needs bubblewrap (apt-get install -y bubblewrap).
The bearer token is read from the environment variable the config's token_env names.
Example config: services/sandbox/sandbox.example.json`;

async function main(argv: string[]): Promise<number> {
  let values: { config?: string; check?: boolean; help?: boolean };
  try {
    // -config and --config alike, as the brain command takes them
    const args = argv.map((arg) => (/^-[a-z][a-z-]+(=.*)?$/.test(arg) ? `-${arg}` : arg));
    ({ values } = parseArgs({
      args,
      options: {
        config: { type: "string", short: "c" },
        check: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    process.stderr.write(`sandbox: ${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const path = values.config ?? "sandbox.json";
  const loaded = loadSandboxConfig(path);
  if (!loaded.ok) {
    for (const problem of loaded.problems) process.stderr.write(`${path}: ${problem}\n`);
    return 2;
  }
  if (values.check) {
    const layout = layoutOf(loaded.config);
    if (!layout.ok) {
      for (const problem of layout.problems) process.stderr.write(`${path}: ${problem}\n`);
      return 2;
    }
    process.stdout.write(`${path}: valid (${[...loaded.config.languages.keys()].join(", ")})\n`);
    return 0;
  }
  let service: Awaited<ReturnType<typeof startSandboxService>>;
  try {
    service = await startSandboxService(loaded.config);
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`sandbox: not started:\n${error.message}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  service.logger.info("stopping");
  await service.close();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`sandbox: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
