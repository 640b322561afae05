#!/usr/bin/env node
import { runServiceCommand } from "../../kit/service-cli.js";
import type { McpBridgeConfig } from "./config.js";

const HELP = `mcp-bridge — the tools of MCP servers (stdio or Streamable HTTP) as Brain tool services

Usage:
  mcp-bridge [-config FILE]          start the servers and serve their tools (default config: mcp-bridge.json)
  mcp-bridge -config FILE -check     validate FILE and exit: 0 when valid, 2 with one problem per line
  mcp-bridge --help

The config names the servers as Claude Desktop's "mcpServers" does: {"command", "args", "env"}
for a server over stdio, {"url", "headers"} for one over Streamable HTTP; \${NAME} in an env or
header value is the bridge's environment variable NAME. Each server's tools are served at
http://LISTEN/tools/PREFIX_TOOL (the prefix is the server's name unless "prefix" says otherwise).
The bearer token Brain sends is read from the variable the config's token_env names.
Print Brain's bindings for a running bridge with: npx brain tools config http://LISTEN --token-env NAME
Example config: services/mcp-bridge/mcp-bridge.example.json`;

runServiceCommand<McpBridgeConfig>({
  name: "mcp-bridge",
  help: HELP,
  defaultConfig: "mcp-bridge.json",
  // loaded when needed, not at the top, so --help answers without loading validators and the SDK
  load: async (path) => (await import("./config.js")).loadMcpBridgeConfig(path),
  check: ({ servers }) => ({
    ok: true,
    summary: `${servers.length} MCP server${servers.length === 1 ? "" : "s"}: ${servers.map((server) => `${server.name} (${server.kind})`).join(", ")}`,
  }),
  start: async (config) => (await import("./service.js")).startMcpBridge(config),
});
