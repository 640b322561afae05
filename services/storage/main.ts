#!/usr/bin/env node
import { parseArgs } from "node:util";

const HELP = `storage — Brain's storage tool service: files scoped to a tenant or a session

Usage:
  storage [-config FILE]          start the service (default config: storage.json)
  storage -config FILE -check     validate FILE and exit: 0 when valid, 2 with one problem per line
  storage --help

Tools: storage_write, storage_read, storage_stat, storage_list, storage_delete, at
http://LISTEN/tools/NAME. Backends: "filesystem" (default, ./data/storage beside the config) or
"s3" (any S3-compatible store; credentials from the environment variables the config names).
The bearer token is read from the environment variable the config's token_env names.
Print Brain's bindings for a running service with: npx brain tools config http://LISTEN --token-env NAME
Example config: services/storage/storage.example.json`;

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
    process.stderr.write(`storage: ${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const path = values.config ?? "storage.json";
  // loaded here, not at the top, so --help answers without loading validators and SDKs
  const { loadStorageConfig } = await import("./config.js");
  const loaded = loadStorageConfig(path);
  if (!loaded.ok) {
    for (const problem of loaded.problems) process.stderr.write(`${path}: ${problem}\n`);
    return 2;
  }
  if (values.check) {
    const { backend, scope } = loaded.config;
    process.stdout.write(`${path}: valid (${backend.kind} backend, one storage per ${scope})\n`);
    return 0;
  }
  const { startStorageService } = await import("./service.js");
  let service: Awaited<ReturnType<typeof startStorageService>>;
  try {
    service = await startStorageService(loaded.config);
  } catch (error) {
    process.stderr.write(`storage: not started: ${(error as Error).message}\n`);
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
    process.stderr.write(`storage: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
