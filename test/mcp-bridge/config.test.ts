import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { resolveMcpBridgeConfig } from "../../services/mcp-bridge/config.js";
import { runNode } from "../helpers/cli.js";
import { fromEnv } from "./bridge-process.js";

const env = { MCP_BRIDGE_KEY: "bridge-token", GITHUB_TOKEN: "ghp_secret", API: "api-secret" };

it("reads stdio and Streamable HTTP servers as Claude Desktop names them, values taken from the bridge's environment", () => {
  const resolved = resolveMcpBridgeConfig(
    {
      token_env: "MCP_BRIDGE_KEY",
      mcpServers: {
        "git hub": {
          command: "npx",
          args: ["-y", "server-github"],
          env: { GITHUB_PERSONAL_ACCESS_TOKEN: fromEnv("GITHUB_TOKEN"), MODE: "read" },
        },
        remote: {
          type: "http",
          url: "https://mcp.example.com/mcp",
          headers: { Authorization: `Bearer ${fromEnv("API")}` },
          isolation: "tenant",
        },
      },
    },
    env,
    "/srv/bridge",
  );
  if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
  const [github, remote] = resolved.config.servers;
  expect(github).toMatchObject({
    kind: "stdio",
    name: "git hub",
    prefix: "git_hub",
    command: "npx",
    cwd: "/srv/bridge",
    isolation: "shared",
    timeoutMs: 300_000,
  });
  expect(remote).toMatchObject({
    kind: "http",
    prefix: "remote",
    url: "https://mcp.example.com/mcp",
    isolation: "tenant",
    idleMs: 600_000,
  });
  if (github?.kind !== "stdio" || remote?.kind !== "http") throw new Error("kinds");
  expect(github.env.GITHUB_PERSONAL_ACCESS_TOKEN?.reveal()).toBe("ghp_secret");
  expect(github.env.MODE?.reveal()).toBe("read");
  expect(remote.headers.Authorization?.reveal()).toBe("Bearer api-secret");
  // the resolved config shows no secret when logged
  expect(JSON.stringify(resolved.config)).not.toMatch(/ghp_secret|api-secret|bridge-token/);
});

it("reports every problem at once, naming fields and variables, never their values", () => {
  const resolved = resolveMcpBridgeConfig(
    {
      token_env: "NOT_SET",
      restart: { initial_seconds: 10, max_seconds: 1 },
      mcpServers: {
        a: { command: "x", env: { KEY: fromEnv("MISSING") }, colour: "red" },
        b: { url: "ftp://example.com", headers: { "X-Key": fromEnv("ALSO_MISSING") } },
        c: { url: "http://127.0.0.1:1/mcp", headers: { "X-Key": fromEnv("GITHUB_TOKEN") } },
      },
    },
    env,
    "/srv",
  );
  expect(resolved).toEqual({
    ok: false,
    problems: expect.arrayContaining([
      'mcpServers["a"].colour: unknown field',
      "token_env: set the environment variable NOT_SET to the token Brain sends",
      'mcpServers["b"].url: must be an absolute http or https URL',
      'mcpServers["b"].headers.X-Key: set the environment variable ALSO_MISSING',
      "restart.initial_seconds: must not exceed restart.max_seconds",
    ]),
  });
  expect(JSON.stringify(resolved)).not.toContain("ghp_secret");
});

it("checks a config file from the command line", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-config-"));
  const path = join(dir, "bridge.json");
  try {
    writeFileSync(
      path,
      JSON.stringify({
        token_env: "MCP_BRIDGE_KEY",
        mcpServers: { files: { command: "node", args: ["server.js"] } },
      }),
    );
    const valid = runNode("dist/services/mcp-bridge/main.js", ["-config", path, "-check"], {
      MCP_BRIDGE_KEY: "t",
    });
    expect(valid).toMatchObject({ code: 0, stdout: `${path}: valid (1 MCP server: files (stdio))\n` });
    const missing = runNode("dist/services/mcp-bridge/main.js", ["--config", path, "--check"], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${path}: token_env: set the environment variable MCP_BRIDGE_KEY`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
