import { parseArgs } from "node:util";
import { normalizeFlags } from "../../runtime/process.js";
import { HostConfigSchema } from "../config/schema.js";

const HELP = `brain schema — print the host config's JSON Schema

Usage:
  brain schema > brain.schema.json

Prints the JSON Schema (draft 2020-12) that \`brain -check\` applies, for editors to complete and
check a host config with: give the config a "$schema" field naming the file. The repository keeps
a copy in schema/brain.schema.json.

Options:
  -h, --help    this help`;

export async function run(args: string[]): Promise<number> {
  let help: boolean;
  try {
    const { values } = parseArgs({
      args: normalizeFlags(args),
      options: { help: { type: "boolean", short: "h" } },
    });
    help = values.help === true;
  } catch (error) {
    process.stderr.write(`brain schema: ${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", ...HostConfigSchema };
  process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
  return 0;
}
