import { isAbsolute, resolve } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { type ConfigResult, envSecrets, loadServiceConfig } from "../../kit/index.js";
import { check, compile, StringEnum } from "../../protocol/validation.js";
import { type Listen, listenOf, urlProblem } from "../../runtime/addresses.js";
import { Secret } from "../../runtime/secret.js";

const strict = { additionalProperties: false } as const;
const ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$";
const Seconds = (fallback: number, maximum: number, description: string) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum, default: fallback, description }));

/** What every server entry may set besides how to reach the server. */
const serverFields = {
  prefix: Type.Optional(
    Type.String({
      pattern: "^[a-zA-Z0-9_-]{0,32}$",
      description:
        'Brain\'s names for the server\'s tools are PREFIX_TOOL; default: the server\'s key, its other characters as "_"; "" for none.',
    }),
  ),
  timeout_seconds: Seconds(
    300,
    86_400,
    "How long a call may go without an answer or progress; `brain tools config` writes it as the bindings' timeout_seconds.",
  ),
  isolation: Type.Optional(
    StringEnum(["shared", "tenant", "session"], {
      default: "shared",
      description:
        "shared: one server for every call; tenant: one per tenant; session: one per session, so no tenant's MCP state reaches another's.",
    }),
  ),
  idle_seconds: Seconds(600, 86_400, "tenant or session isolation: a server unused this long is stopped."),
  max_instances: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 32,
      description:
        "tenant or session isolation: the most servers at once; past it the least recently used idle one is stopped, and with none idle a call is refused.",
    }),
  ),
};

const StdioServerSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal("stdio")),
    command: Type.String({ minLength: 1, description: "The program; found on PATH like a shell would." }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: ENV_NAME }), Type.String(), {
        description:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: ${NAME} is the config's own syntax, not JavaScript's
          "The server's environment besides HOME, LOGNAME, PATH, SHELL, TERM and USER; ${NAME} in a value is the bridge's variable NAME, so keys stay out of this file.",
      }),
    ),
    cwd: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The server's working directory, relative to this file; default: this file's folder.",
      }),
    ),
    max_message_bytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        maximum: 1_073_741_824,
        default: 16_777_216,
        description: "The largest message read from the server.",
      }),
    ),
    ...serverFields,
  },
  strict,
);

const HttpServerSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal("http")),
    url: Type.String({ minLength: 1, description: "The server's Streamable HTTP endpoint." }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }), Type.String(), {
        description:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: ${NAME} is the config's own syntax, not JavaScript's
          'Sent with every request; ${NAME} in a value is the bridge\'s variable NAME: "Bearer ${NOTION_TOKEN}".',
      }),
    ),
    ...serverFields,
  },
  strict,
);

export const McpBridgeConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(
      Type.String({ default: "127.0.0.1:8094", description: "host:port; loopback by default." }),
    ),
    token_env: Type.String({
      pattern: ENV_NAME,
      description: "The environment variable holding the token Brain sends (the bindings' token_env).",
    }),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
    keep_alive_seconds: Seconds(15, 300, "Keep-alive comment interval on event streams."),
    startup_timeout_seconds: Seconds(30, 600, "How long a server may take to start and list its tools."),
    restart: Type.Optional(
      Type.Object(
        {
          initial_seconds: Seconds(0.5, 600, "The wait before restarting a server that exited."),
          max_seconds: Seconds(30, 3600, "The wait doubles after each exit, up to this."),
        },
        strict,
      ),
    ),
    mcpServers: Type.Record(
      Type.String({ minLength: 1, maxLength: 64 }),
      Type.Record(Type.String(), Type.Unknown()),
      {
        minProperties: 1,
        description:
          'The MCP servers, by name, as Claude Desktop\'s "mcpServers": {command, args, env} or {url, headers}.',
      },
    ),
  },
  { ...strict, title: "MCP bridge config" },
);

type RawConfig = Static<typeof McpBridgeConfigSchema>;
type RawStdio = Static<typeof StdioServerSchema>;
type RawHttp = Static<typeof HttpServerSchema>;

export type Isolation = "shared" | "tenant" | "session";

interface ServerCommon {
  /** The key in mcpServers. */
  name: string;
  prefix: string;
  timeoutMs: number;
  isolation: Isolation;
  idleMs: number;
  maxInstances: number;
}

export type ServerConfig =
  | (ServerCommon & {
      kind: "stdio";
      command: string;
      args: string[];
      env: Record<string, Secret>;
      cwd: string;
      maxMessageBytes: number;
    })
  | (ServerCommon & { kind: "http"; url: string; headers: Record<string, Secret> });

export interface McpBridgeConfig {
  listen: Listen;
  token: Secret;
  logLevel: string;
  keepAliveMs: number;
  startupTimeoutMs: number;
  restart: { initialMs: number; maxMs: number };
  servers: ServerConfig[];
}

const validate = compile<RawConfig>(McpBridgeConfigSchema);
const validateStdio = compile<RawStdio>(StdioServerSchema);
const validateHttp = compile<RawHttp>(HttpServerSchema);

const ms = (seconds: number) => Math.round(seconds * 1000);

/** Check a parsed config completely, against the environment too; every problem is reported. */
export function resolveMcpBridgeConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv,
  baseDir: string,
): ConfigResult<McpBridgeConfig> {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const file = checked.value;
  const problems: string[] = [];
  const listen = listenOf(file.listen ?? "127.0.0.1:8094", problems);
  const token = envSecrets(env, problems)("token_env", file.token_env, "the token Brain sends");
  const servers = Object.entries(file.mcpServers).flatMap(([name, entry]) => {
    const server = resolveServer(name, entry, env, baseDir, problems);
    return server ? [server] : [];
  });
  const restart = {
    initialMs: ms(file.restart?.initial_seconds ?? 0.5),
    maxMs: ms(file.restart?.max_seconds ?? 30),
  };
  if (restart.initialMs > restart.maxMs)
    problems.push("restart.initial_seconds: must not exceed restart.max_seconds");
  if (!listen || !token || problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    config: {
      listen,
      token,
      logLevel: file.log_level ?? "info",
      keepAliveMs: ms(file.keep_alive_seconds ?? 15),
      startupTimeoutMs: ms(file.startup_timeout_seconds ?? 30),
      restart,
      servers,
    },
  };
}

function resolveServer(
  name: string,
  entry: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  baseDir: string,
  problems: string[],
): ServerConfig | undefined {
  const path = `mcpServers[${JSON.stringify(name)}]`;
  const http = entry.url !== undefined || entry.type === "http";
  const checked = http ? check(validateHttp, entry, path) : check(validateStdio, entry, path);
  if (!checked.ok) {
    problems.push(...checked.problems);
    return undefined;
  }
  const raw = checked.value;
  const common: ServerCommon = {
    name,
    prefix: raw.prefix ?? name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 32),
    timeoutMs: ms(raw.timeout_seconds ?? 300),
    isolation: raw.isolation ?? "shared",
    idleMs: ms(raw.idle_seconds ?? 600),
    maxInstances: raw.max_instances ?? 32,
  };
  const expand = expander(env, problems);
  if ("url" in raw) {
    const problem = urlProblem(raw.url);
    if (problem) problems.push(`${path}.url: ${problem}`);
    const headers = mapValues(raw.headers ?? {}, (value, header) =>
      expand(`${path}.headers.${header}`, value),
    );
    return { ...common, kind: "http", url: raw.url, headers };
  }
  const childEnv = mapValues(raw.env ?? {}, (value, variable) => expand(`${path}.env.${variable}`, value));
  return {
    ...common,
    kind: "stdio",
    command: raw.command,
    args: raw.args ?? [],
    env: childEnv,
    cwd: raw.cwd === undefined ? baseDir : isAbsolute(raw.cwd) ? raw.cwd : resolve(baseDir, raw.cwd),
    maxMessageBytes: raw.max_message_bytes ?? 16_777_216,
  };
}

/** `${NAME}` in a value → the bridge's variable NAME; a missing or empty one is a problem naming it. */
function expander(env: NodeJS.ProcessEnv, problems: string[]): (field: string, value: string) => Secret {
  return (field, value) =>
    new Secret(
      value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, variable: string) => {
        const found = env[variable];
        if (!found) problems.push(`${field}: set the environment variable ${variable}`);
        return found ?? "";
      }),
    );
}

function mapValues<T>(
  record: Record<string, string>,
  map: (value: string, key: string) => T,
): Record<string, T> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value, key)]));
}

export function loadMcpBridgeConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): ConfigResult<McpBridgeConfig> {
  return loadServiceConfig(path, env, resolveMcpBridgeConfig);
}
