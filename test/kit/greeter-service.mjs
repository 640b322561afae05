// A tool service built on the kit's command line, for test/kit/service-cli.test.ts (run from dist/).
// Config: {"greeting": "…", "token_env": "NAME", "fail_start"?: "why"}.
import { readFileSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { defineTool, envSecrets, loadServiceConfig, runServiceCommand, serve } from "../../dist/kit/index.js";

const HELP = `greeter — greets

Usage:
  greeter [-config FILE] [-check]
  greeter hello NAME [--mark TEXT]`;

runServiceCommand({
  name: "greeter",
  help: HELP,
  defaultConfig: "greeter.json",
  load: (path) =>
    loadServiceConfig(path, process.env, (raw, env) => {
      const problems = [];
      if (typeof raw.greeting !== "string") problems.push("greeting: is required");
      const token = envSecrets(env, problems)("token_env", raw.token_env, "the token Brain sends");
      return problems.length > 0 ? { ok: false, problems } : { ok: true, config: { ...raw, token } };
    }),
  check: (config) =>
    config.greeting === ""
      ? { ok: false, problems: ["greeting: must not be empty", "greeting: says nothing"] }
      : { ok: true, summary: `greeting "${config.greeting}"` },
  start: async (config) => {
    if (config.fail_start) throw new Error(config.fail_start);
    const greet = defineTool({
      name: "greet",
      description: "Greet someone.",
      input: Type.Object({ name: Type.String() }),
      handler: ({ name }) => `${config.greeting}, ${name}`,
    });
    return serve({ tools: [greet], token: config.token.reveal(), name: "greeter" });
  },
  commands: {
    hello: async ({ args, flags, usage }) => {
      if (args.length !== 1) return usage("hello takes one name");
      if (args[0] === "crash") throw new Error("crashed on purpose");
      const { greeting } = JSON.parse(readFileSync(flags.config, "utf8"));
      process.stdout.write(`${greeting}, ${args[0]}${flags.mark ?? ""}\n`);
      return 0;
    },
  },
  stringFlags: ["mark"],
});
