#!/usr/bin/env node
import { runServiceCommand } from "../../kit/service-cli.js";
import type { StorageConfig } from "./config.js";

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

runServiceCommand<StorageConfig>({
  name: "storage",
  help: HELP,
  defaultConfig: "storage.json",
  // loaded when needed, not at the top, so --help answers without loading validators and SDKs
  load: async (path) => (await import("./config.js")).loadStorageConfig(path),
  check: ({ backend, scope }) => ({ ok: true, summary: `${backend.kind} backend, one storage per ${scope}` }),
  start: async (config) => (await import("./service.js")).startStorageService(config),
});
