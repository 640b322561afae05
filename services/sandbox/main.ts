#!/usr/bin/env node
import { runServiceCommand } from "../../kit/service-cli.js";
import { loadSandboxConfig } from "./config.js";
import { layoutOf } from "./sandbox.js";
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

runServiceCommand({
  name: "sandbox",
  help: HELP,
  defaultConfig: "sandbox.json",
  load: (path) => loadSandboxConfig(path),
  check: (config) => {
    const layout = layoutOf(config);
    return layout.ok ? { ok: true, summary: [...config.languages.keys()].join(", ") } : layout;
  },
  start: (config) => startSandboxService(config),
});
