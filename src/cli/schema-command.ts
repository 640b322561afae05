import { HostConfigSchema } from "../config/schema.js";

export async function run(): Promise<number> {
  const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", ...HostConfigSchema };
  process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
  return 0;
}
