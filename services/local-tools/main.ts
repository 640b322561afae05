#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadLocalToolsConfig, parseListen, readLocalToolsConfigFile } from "./config.js";
import { answerApproval, listApprovals } from "./operator-cli.js";

// the shipped config, next to the sources: dist/services/local-tools/main.js → services/local-tools/
const DEFAULT_CONFIG = fileURLToPath(
  new URL("../../../services/local-tools/local-tools.json", import.meta.url),
);

const HELP = `local-tools — tools that need no provider: echo, wait, ask_approval

Usage:
  local-tools [--config FILE]                    serve the tools, the operator page and API
  local-tools --check [--config FILE]            validate the config and exit: 0 valid, 2 problems
  local-tools approvals [--config FILE] [--url URL]
                                                 list the approvals waiting for a person
  local-tools answer ID yes|no [--by NAME] [--config FILE] [--url URL]
                                                 answer an approval as the operator
  local-tools --help

The config (default: ${DEFAULT_CONFIG}) names the environment variables holding the two tokens:
token_env (default LOCAL_TOOLS_KEY) is the token Brain sends with tool calls; operator_token_env
(default LOCAL_TOOLS_OPERATOR_KEY) is the token people answer approvals with. They must differ.
The operator page is at http://HOST:PORT/operator. For Brain's host config, run
\`npx brain tools config http://HOST:PORT --token-env LOCAL_TOOLS_KEY\` while the service runs.`;

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      check: { type: "boolean" },
      url: { type: "string" },
      by: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

const print = (line: string) => process.stdout.write(`${line}\n`);
const printError = (line: string) => process.stderr.write(`${line}\n`);

function usage(message: string): number {
  printError(`local-tools: ${message}\n\n${HELP}`);
  return 2;
}

async function operatorCommand(
  command: string,
  rest: string[],
  values: ReturnType<typeof parse>["values"],
): Promise<number> {
  const path = values.config ?? DEFAULT_CONFIG;
  const read = readLocalToolsConfigFile(path);
  if (!read.ok) {
    for (const line of read.problems) printError(`${path}: ${line}`);
    return 2;
  }
  const tokenEnv = read.file.operator_token_env ?? "LOCAL_TOOLS_OPERATOR_KEY";
  const token = process.env[tokenEnv];
  if (!token) return usage(`set ${tokenEnv} to the operator token (the config's operator_token_env)`);
  let url = values.url;
  if (url === undefined) {
    const listen = parseListen(read.file.listen ?? "127.0.0.1:8082");
    if (!listen || listen.port === 0) return usage("the config listens on no fixed port: pass --url URL");
    const host = ["0.0.0.0", "::"].includes(listen.host) ? "127.0.0.1" : listen.host;
    url = `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
  }
  const target = { url: url.replace(/\/+$/, ""), token, tokenEnv };
  if (command === "approvals") {
    if (rest.length > 0) return usage("approvals takes no arguments");
    return listApprovals(target, print);
  }
  const [id, answer, ...extra] = rest;
  if (!id || (answer !== "yes" && answer !== "no") || extra.length > 0) {
    return usage("answer takes an approval id and yes or no: local-tools answer apr_… yes");
  }
  return answerApproval(target, id, answer, values.by, print);
}

async function serveCommand(values: ReturnType<typeof parse>["values"]): Promise<number> {
  const path = values.config ?? DEFAULT_CONFIG;
  const loaded = loadLocalToolsConfig(path);
  if (!loaded.ok) {
    for (const line of loaded.problems) printError(`${path}: ${line}`);
    printError(
      `${path}: ${loaded.problems.length} problem${loaded.problems.length === 1 ? "" : "s"}; local-tools did not start`,
    );
    return 2;
  }
  if (values.check) {
    print(`${path}: valid`);
    return 0;
  }
  const { startLocalTools } = await import("./service.js");
  const running = await startLocalTools(loaded.config);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  running.logger.info("stopping");
  await running.close();
  running.logger.flush();
  return 0;
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    print(HELP);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (command === "approvals" || command === "answer") return operatorCommand(command, rest, values);
  if (command !== undefined) return usage(`unknown command "${command}"`);
  return serveCommand(values);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    printError(`local-tools: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
