#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { runServiceCommand, type SubcommandContext } from "../../kit/service-cli.js";
import { parseListen } from "../../runtime/addresses.js";
import { envSecret } from "../../runtime/secret.js";
import { loadLocalToolsConfig, readLocalToolsConfigFile } from "./config.js";
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

const print = (line: string) => process.stdout.write(`${line}\n`);

async function operatorCommand(
  command: "approvals" | "answer",
  { args, flags, usage }: SubcommandContext,
): Promise<number> {
  const path = flags.config;
  const read = readLocalToolsConfigFile(path);
  if (!read.ok) {
    for (const line of read.problems) process.stderr.write(`${path}: ${line}\n`);
    return 2;
  }
  const tokenEnv = read.file.operator_token_env ?? "LOCAL_TOOLS_OPERATOR_KEY";
  const operatorToken = envSecret(
    process.env,
    tokenEnv,
    `set ${tokenEnv} to the operator token (the config's operator_token_env)`,
  );
  if (!operatorToken.ok) return usage(operatorToken.problem);
  const token = operatorToken.secret.reveal();
  let url = flags.url;
  if (url === undefined) {
    const listen = parseListen(read.file.listen ?? "127.0.0.1:8082");
    if (!listen || listen.port === 0) return usage("the config listens on no fixed port: pass --url URL");
    const host = ["0.0.0.0", "::"].includes(listen.host) ? "127.0.0.1" : listen.host;
    url = `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
  }
  const target = { url: url.replace(/\/+$/, ""), token, tokenEnv };
  if (command === "approvals") {
    if (args.length > 0) return usage("approvals takes no arguments");
    return listApprovals(target, print);
  }
  const [id, answer, ...extra] = args;
  if (!id || (answer !== "yes" && answer !== "no") || extra.length > 0) {
    return usage("answer takes an approval id and yes or no: local-tools answer apr_… yes");
  }
  return answerApproval(target, id, answer, flags.by, print);
}

runServiceCommand({
  name: "local-tools",
  help: HELP,
  defaultConfig: DEFAULT_CONFIG,
  load: (path) => loadLocalToolsConfig(path),
  start: async (config) => (await import("./service.js")).startLocalTools(config),
  commands: {
    approvals: (context) => operatorCommand("approvals", context),
    answer: (context) => operatorCommand("answer", context),
  },
  stringFlags: ["url", "by"],
});
