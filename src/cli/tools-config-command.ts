import { request } from "undici";
import { type ToolManifest, ToolManifestSchema } from "../../protocol/manifest.js";
import { check, compile } from "../../protocol/validation.js";
import { type HostConfig, HostConfigSchema } from "../config/schema.js";
import { parseToolServiceArgs } from "./tool-service-args.js";
import { untilListening, waitSeconds } from "./wait-for-service.js";

const HELP = `brain tools config — print a host config for a tool service

Usage:
  brain tools config URL [options] > brain.json

URL is the service (http://127.0.0.1:8082) or its tools' base path (…/tools). The command reads
the service's tool list (GET URL/tools, the format in docs/protocol.md: services built with the
tool kit and both example services in examples/tools answer it) and
prints a complete host config: one tenant, the scripted model as "default", and one binding per
tool with its schemas, its URL and the name of the environment variable holding the token.
Secrets are never written: only variable names.

Options:
  --token-env NAME     the variable holding the service's token, written as each binding's token_env
                       and used to read the tool list (default BRAIN_TOOLS_KEY)
  --token VALUE        the token itself, only to read the tool list (prefer --token-env)
  --tenant ID          the tenant the tools are offered to (default local)
  --api-key-env NAME   the variable holding the tenant's API key (default BRAIN_API_KEY)
  --listen HOST:PORT   where Brain listens (default 127.0.0.1:8080)
  --store PATH         Brain's SQLite file, relative to the config file (default ./data/brain.db)
  --wait SECONDS       keep trying for this long while nothing listens at URL yet, for a service
                       that is still starting (default 0: ask once)
  -h, --help           this help`;

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const validateManifest = compile<ToolManifest>(ToolManifestSchema);
const validateHostConfig = compile<HostConfig>(HostConfigSchema);

function fail(message: string, code = 1): number {
  process.stderr.write(`brain tools config: ${message}\n`);
  return code;
}

/** Where the tool list is read and the tools answer: the URL as given, or `…/tools` for a bare origin. */
export function toolsBase(url: URL): string {
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.origin}${path === "" ? "/tools" : path}`;
}

export interface HostConfigOptions {
  base: string;
  tokenEnv: string;
  tenant: string;
  apiKeyEnv: string;
  listen: string;
  store: string;
}

/** The host config for a service's tools. Pure. */
export function hostConfigFor(manifest: ToolManifest, options: HostConfigOptions): HostConfig {
  return {
    listen: options.listen,
    store: { kind: "sqlite", path: options.store },
    tenants: [{ id: options.tenant, api_key_env: options.apiKeyEnv }],
    models: [{ name: "default", provider: "scripted" }],
    tools: manifest.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.input_schema,
      ...(tool.output_schema && { output_schema: tool.output_schema }),
      url: `${options.base}/${encodeURIComponent(tool.name)}`,
      token_env: options.tokenEnv,
      tenants: [options.tenant],
      ...(tool.timeout_seconds !== undefined && { timeout_seconds: tool.timeout_seconds }),
    })),
  };
}

async function readManifest(base: string, token: string, wait: number): Promise<ToolManifest | string> {
  const unreachable = await untilListening(new URL(base), wait, (line) => process.stderr.write(`${line}\n`));
  if (unreachable) return unreachable;
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(base, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    return `cannot reach ${base} (${code}); is the service running?`;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_MANIFEST_BYTES) {
      response.body.destroy();
      return `the tool list at ${base} exceeds ${MAX_MANIFEST_BYTES} bytes`;
    }
    chunks.push(chunk);
  }
  if (response.statusCode === 401) return `${base} refused the token (401); check --token-env`;
  if (response.statusCode !== 200) {
    return `${base} answered ${response.statusCode}; a tool service lists its tools at GET …/tools (docs/protocol.md, "The tool list")`;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return `the tool list at ${base} is not valid JSON`;
  }
  const checked = check(validateManifest, raw);
  return checked.ok ? checked.value : `the tool list at ${base} is invalid: ${checked.problems.join("; ")}`;
}

export async function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseToolServiceArgs(args, ["tenant", "api-key-env", "listen", "store", "wait"], env);
  if (parsed.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (parsed.problem !== undefined) return fail(`${parsed.problem}\n\n${HELP}`, 2);
  const { url: raw, token, flags } = parsed;
  const wait = waitSeconds(flags.wait);
  if (typeof wait === "string") return fail(wait, 2);
  const base = toolsBase(new URL(raw));
  const manifest = await readManifest(base, token, wait);
  if (typeof manifest === "string") return fail(manifest);
  const config = hostConfigFor(manifest, {
    base,
    tokenEnv: flags["token-env"] ?? "BRAIN_TOOLS_KEY",
    tenant: flags.tenant ?? "local",
    apiKeyEnv: flags["api-key-env"] ?? "BRAIN_API_KEY",
    listen: flags.listen ?? "127.0.0.1:8080",
    store: flags.store ?? "./data/brain.db",
  });
  // the flags and the service's names end up in the file: check it as Brain will
  const checked = check(validateHostConfig, config);
  if (!checked.ok) return fail(`the generated config would be invalid:\n${checked.problems.join("\n")}`);
  process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
  process.stderr.write(
    `${manifest.tools.length} tools from ${base}; set ${config.tenants[0]?.api_key_env} and ${flags["token-env"] ?? "BRAIN_TOOLS_KEY"} before starting Brain\n`,
  );
  return 0;
}
