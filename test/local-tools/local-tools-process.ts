import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { runNode } from "../helpers/cli.js";
import { type StartedProcess, startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";
import { removedOnFailure } from "../helpers/temp-dir.js";

export interface LocalTools {
  url: string;
  token: string;
  operatorToken: string;
  configPath: string;
  env: Record<string, string>;
  process: StartedProcess;
  /** Every line the process wrote, across restarts. */
  output: () => string;
  /** Stop, then start again on the same port and the same approvals file. */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
}

/** The real local-tools process (built, in dist/) with its own config file, tokens and SQLite file; small time limits. */
export async function startLocalTools(
  overrides: Record<string, unknown> = {},
  tokens: { LOCAL_TOOLS_KEY?: string } = {},
): Promise<LocalTools> {
  const dir = mkdtempSync(join(tmpdir(), "local-tools-test-"));
  const configPath = join(dir, "local-tools.json");
  const env = {
    LOCAL_TOOLS_KEY: tokens.LOCAL_TOOLS_KEY ?? `tools-${randomBytes(12).toString("hex")}`,
    LOCAL_TOOLS_OPERATOR_KEY: `operator-${randomBytes(12).toString("hex")}`,
  };
  const config = {
    listen: "127.0.0.1:0",
    store: "./approvals.db",
    log_level: "debug",
    keep_alive_seconds: 0.2,
    approvals: { default_timeout_seconds: 20, max_timeout_seconds: 60, progress_seconds: 0.2 },
    wait: { max_seconds: 60, progress_seconds: 0.2 },
    ...overrides,
  };
  const earlier: string[] = [];
  const launch = async (listen: string) => {
    writeFileSync(configPath, JSON.stringify({ ...config, listen }));
    return startProcess(
      ["dist/services/local-tools/main.js", "--config", configPath],
      env,
      toolServiceUrlFromLog,
    );
  };
  const first = await removedOnFailure(dir, launch(config.listen));
  const tools: LocalTools = {
    url: first.ready,
    token: env.LOCAL_TOOLS_KEY,
    operatorToken: env.LOCAL_TOOLS_OPERATOR_KEY,
    configPath,
    env,
    process: first,
    output: () => [...earlier, ...tools.process.output].join("\n"),
    restart: async () => {
      await tools.process.stop();
      earlier.push(...tools.process.output);
      const started = await launch(new URL(tools.url).host);
      tools.process = started;
      tools.url = started.ready;
    },
    stop: async () => {
      await tools.process.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return tools;
}

/** Call the operator API with a token (the operator's, or any other to see it refused). */
export async function operator(
  tools: LocalTools,
  method: "GET" | "POST",
  path: string,
  options: { token?: string; body?: unknown } = {},
) {
  const response = await request(`${tools.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? tools.operatorToken}`,
      ...(options.body !== undefined && { "content-type": "application/json" }),
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** A real Brain (startBrain) whose tools are the service's, offered to acme, with their token in its environment. */
export async function startBrainFor(tools: LocalTools): Promise<TestBrain> {
  return startBrain({ tools: await bindingsFor(tools) }, { env: { LOCAL_TOOLS_KEY: tools.token } });
}

/** Brain's bindings for the service's tools, made as `brain tools config` makes them, offered to acme. */
async function bindingsFor(tools: LocalTools): Promise<Record<string, unknown>[]> {
  const { hostConfigFor } = await import("../../src/cli/tools-config-command.js");
  const response = await request(`${tools.url}/tools`, {
    headers: { authorization: `Bearer ${tools.token}` },
  });
  const manifest = (await response.body.json()) as Parameters<typeof hostConfigFor>[0];
  const config = hostConfigFor(manifest, {
    base: `${tools.url}/tools`,
    tokenEnv: "LOCAL_TOOLS_KEY",
    tenant: "acme",
    apiKeyEnv: "KEY_ACME",
    listen: "127.0.0.1:0",
    store: "./brain.db",
  });
  return config.tools ?? [];
}

/** Run the built `local-tools` command to completion (it must not call back into this process). */
export function runLocalToolsCli(args: string[], env: Record<string, string>) {
  return runNode("dist/services/local-tools/main.js", args, env);
}
