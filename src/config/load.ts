import { resolve } from "node:path";
import { compileToolSchema, type ToolSchemaValidator } from "../../protocol/tool-schemas.js";
import { check, compile } from "../../protocol/validation.js";
import { type Listen, listenOf, urlProblem } from "../../runtime/addresses.js";
import { readJsonFile } from "../../runtime/config-file.js";
import { envSecret, type Secret } from "../../runtime/secret.js";
import { type ContextWindow, contextWindowOf, summariserWindow } from "../context/window.js";
import { type ExportSettings, exportSettings } from "../telemetry/export-settings.js";
import {
  DEFAULT_INSPECT_SESSION,
  DEFAULT_LIMITS,
  DEFAULT_MAX_MODEL_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  type HostConfig,
  HostConfigSchema,
  type Limits,
  type ModelEntry,
  PostgresStoreSchema,
  SqliteStoreSchema,
  type ToolBindingConfig,
} from "./schema.js";

/**
 * A model entry with its API key read from `api_key_env` (the key reaches the provider and nothing
 * else) and its context window resolved (undefined: conversations are never compacted).
 */
export type ModelConfig = ModelEntry & { apiKey: Secret | undefined; window: ContextWindow | undefined };

export interface Tenant {
  id: string;
  apiKey: Secret;
  maxConcurrentTurns: number | undefined;
  maxEventStreams: number | undefined;
  requestsPerSecond: number | undefined;
}

export interface ToolBinding {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown> | undefined;
  /**
   * Where each call goes, read once from the configured URL: a URL's getters build a new string at
   * every read, and undici hashes the origin at every call to find the connection pool.
   */
  origin: string;
  /** The URL's path and query. */
  path: string;
  token: Secret | undefined;
  tenants: ReadonlySet<string>;
  timeoutMs: number;
  maxOutputBytes: number;
  /** What the model is sent of one result, at most. */
  maxModelBytes: number;
  inspectSession: boolean;
  /** Every call waits for a person's approval before it is sent. */
  approval: boolean;
  validateArguments: ToolSchemaValidator;
  validateOutput: ToolSchemaValidator | undefined;
}

export type StoreConfig =
  | { kind: "sqlite"; path: string }
  | {
      kind: "postgres";
      /** The connection URL, which may hold a password. */
      url: Secret;
      /** The variable the URL came from, to name in errors. */
      urlEnv: string;
      leaseSeconds: number;
      poolSize: number;
    };

export interface BrainConfig {
  listen: Listen;
  publicUrl: string | undefined;
  logLevel: string;
  store: StoreConfig;
  tenants: Tenant[];
  models: ReadonlyMap<string, ModelConfig>;
  defaultModel: string;
  tools: ReadonlyMap<string, ToolBinding>;
  limits: Limits;
  /** Where traces are exported; undefined: tracing is off. */
  tracing: ExportSettings | undefined;
}

export type LoadResult = { ok: true; config: BrainConfig } | { ok: false; problems: string[] };

export interface LoadOptions {
  env: NodeJS.ProcessEnv;
  /** Relative paths in the config (the store path) resolve against this directory. */
  baseDir: string;
}

const validateHostConfig = compile<HostConfig>(HostConfigSchema);
const { properties } = HostConfigSchema;
type TenantEntry = HostConfig["tenants"][number];
const validateEntry = {
  tenants: compile<TenantEntry>(properties.tenants.items),
  models: compile<ModelEntry>(properties.models.items),
  tools: compile<ToolBindingConfig>(properties.tools.items),
};
const validateField = {
  listen: compile<string>(properties.listen),
  public_url: compile<string>(properties.public_url),
  log_level: compile<HostConfig["log_level"]>(properties.log_level),
  store: compile<HostConfig["store"]>(properties.store),
  limits: compile<HostConfig["limits"]>(properties.limits),
  telemetry: compile<HostConfig["telemetry"]>(properties.telemetry),
};

/**
 * A config as far as its schema accepts it: each field and array entry that is valid on its own,
 * in its place (a refused entry is undefined, so the paths of the others stay right).
 */
type ConfigParts = Omit<HostConfig, "tenants" | "models" | "tools"> & {
  tenants: (TenantEntry | undefined)[];
  models: (ModelEntry | undefined)[];
  tools: (ToolBindingConfig | undefined)[];
};

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): LoadResult {
  const file = readJsonFile(path);
  return file.ok ? resolveConfig(file.value, { env, baseDir: file.dir }) : file;
}

/** Validate a parsed host config completely and resolve defaults and secrets; every problem is reported. */
export function resolveConfig(raw: unknown, options: LoadOptions): LoadResult {
  const checked = check(validateHostConfig, raw);
  if (checked.ok) return resolveParts({ ...checked.value, tools: checked.value.tools ?? [] }, options);
  // the rest is checked too, so one -check names every problem, not only the schema's
  const parts = soundParts(raw);
  const rest = parts && resolveParts(parts, options);
  return { ok: false, problems: [...checked.problems, ...(rest && !rest.ok ? rest.problems : [])] };
}

function soundParts(raw: unknown): ConfigParts | undefined {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const config = raw as Record<string, unknown>;
  const entries = <T>(name: keyof typeof validateEntry): (T | undefined)[] => {
    const list = config[name];
    if (!Array.isArray(list)) return [];
    const validate = validateEntry[name] as (value: unknown) => boolean;
    return list.map((entry) => (validate(entry) ? (entry as T) : undefined));
  };
  const parts: Record<string, unknown> = {
    tenants: entries<TenantEntry>("tenants"),
    models: entries<ModelEntry>("models"),
    tools: entries<ToolBindingConfig>("tools"),
  };
  for (const [name, validate] of Object.entries(validateField)) {
    if (config[name] !== undefined && (validate as (value: unknown) => boolean)(config[name]))
      parts[name] = config[name];
  }
  return parts as ConfigParts;
}

function resolveParts(config: ConfigParts, options: LoadOptions): LoadResult {
  const problems: string[] = [];
  // a tenant entry the schema refused may be the one a binding names: check names only against a whole list
  const tenantsWhole = config.tenants.every((tenant) => tenant !== undefined);

  const secret = (path: string, name: string): Secret | undefined => {
    const read = envSecret(options.env, name);
    if (read.ok) return read.secret;
    problems.push(`${path}: ${read.problem}`);
    return undefined;
  };

  const listen = listenOf(config.listen ?? "127.0.0.1:8080", problems);
  if (config.public_url !== undefined) {
    const problem = urlProblem(config.public_url);
    if (problem) problems.push(`public_url: ${problem}`);
  }

  const tenants: Tenant[] = [];
  const tenantIds = new Set<string>();
  const keyOwners = new Map<string, string>();
  config.tenants.forEach((tenant, i) => {
    if (!tenant) return;
    if (tenantIds.has(tenant.id)) problems.push(`tenants[${i}].id: duplicate tenant id "${tenant.id}"`);
    tenantIds.add(tenant.id);
    const apiKey = secret(`tenants[${i}].api_key_env`, tenant.api_key_env);
    if (!apiKey) return;
    const owner = keyOwners.get(apiKey.reveal());
    if (owner !== undefined && owner !== tenant.id) {
      problems.push(
        `tenants[${i}].api_key_env: holds the same key as tenant "${owner}"; each tenant needs its own key`,
      );
    }
    keyOwners.set(apiKey.reveal(), tenant.id);
    tenants.push({
      id: tenant.id,
      apiKey,
      maxConcurrentTurns: tenant.max_concurrent_turns,
      maxEventStreams: tenant.max_event_streams,
      requestsPerSecond: tenant.requests_per_second,
    });
  });

  const models = new Map<string, ModelConfig>();
  config.models.forEach((model, i) => {
    if (!model) return;
    if (models.has(model.name)) problems.push(`models[${i}].name: duplicate model name "${model.name}"`);
    let apiKey: Secret | undefined;
    if (model.provider !== "scripted") {
      if (model.api_key_env !== undefined) apiKey = secret(`models[${i}].api_key_env`, model.api_key_env);
      // only a server of your own (base_url) may go without a key; the public APIs always need one
      else if (model.base_url === undefined)
        problems.push(
          `models[${i}].api_key_env: required without base_url; name the environment variable that holds the API key`,
        );
      if (model.base_url !== undefined) {
        const problem = urlProblem(model.base_url);
        if (problem) problems.push(`models[${i}].base_url: ${problem}`);
      }
    }
    const resolved = contextWindowOf(model);
    if ("problems" in resolved)
      for (const problem of resolved.problems) problems.push(`models[${i}].${problem}`);
    models.set(model.name, { ...model, apiKey, window: "window" in resolved ? resolved.window : undefined });
  });
  config.models.forEach((model, i) => {
    const named = model?.context?.compaction_model;
    if (!model || named === undefined) return;
    const summariser = models.get(named);
    if (!summariser) {
      problems.push(`models[${i}].context.compaction_model: no model "${named}" in models`);
      return;
    }
    const own = models.get(model.name);
    // the transcript another model summarises must fit that model's window, counted its way
    if (own?.window && named !== model.name)
      models.set(model.name, {
        ...own,
        window: { ...own.window, summariser: summariserWindow(summariser.provider, summariser.window) },
      });
  });

  const tools = new Map<string, ToolBinding>();
  config.tools.forEach((tool, i) => {
    if (!tool) return;
    const at = `tools[${i}]`;
    if (tools.has(tool.name)) problems.push(`${at}.name: duplicate tool name "${tool.name}"`);
    const urlIssue = urlProblem(tool.url);
    if (urlIssue) problems.push(`${at}.url: ${urlIssue}`);
    tool.tenants.forEach((tenant, j) => {
      if (tenantsWhole && !tenantIds.has(tenant))
        problems.push(`${at}.tenants[${j}]: tenant "${tenant}" is not declared in tenants`);
    });
    const token = tool.token_env === undefined ? undefined : secret(`${at}.token_env`, tool.token_env);
    let validateArguments: ToolSchemaValidator | undefined;
    if (tool.input_schema.type !== "object") {
      problems.push(`${at}.input_schema: the root must be an object schema ("type": "object")`);
    } else {
      validateArguments = compileOrReport(tool.input_schema, `${at}.input_schema`, problems);
    }
    // structured_content is an object, so a schema that no object can meet would fail every success
    if (tool.output_schema && tool.output_schema.type !== "object") {
      problems.push(`${at}.output_schema: the root must be an object schema ("type": "object")`);
    }
    const validateOutput =
      tool.output_schema && compileOrReport(tool.output_schema, `${at}.output_schema`, problems);
    if (!validateArguments || urlIssue) return;
    const url = new URL(tool.url);
    tools.set(tool.name, {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema,
      outputSchema: tool.output_schema,
      origin: url.origin,
      path: url.pathname + url.search,
      token,
      tenants: new Set(tool.tenants),
      timeoutMs: Math.round((tool.timeout_seconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS) * 1000),
      maxOutputBytes: tool.max_output_bytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      maxModelBytes: tool.max_model_bytes ?? DEFAULT_MAX_MODEL_BYTES,
      inspectSession: tool.inspect_session ?? DEFAULT_INSPECT_SESSION,
      approval: tool.approval === "always",
      validateArguments,
      validateOutput,
    });
  });

  const store = storeOf(config.store, options.baseDir, secret, problems);
  const limits: Limits = { ...DEFAULT_LIMITS, ...config.limits };
  const tracing = exportSettings(options.env, config.telemetry?.otlp_endpoint);
  if (!tracing.ok) problems.push(...tracing.problems);
  if (problems.length > 0 || !listen || !store || !tracing.ok) return { ok: false, problems };
  return {
    ok: true,
    config: {
      listen,
      publicUrl: config.public_url,
      logLevel: config.log_level ?? "info",
      store,
      tenants,
      models,
      defaultModel: models.has("default") ? "default" : (models.keys().next().value ?? "default"),
      tools,
      limits,
      tracing: tracing.settings,
    },
  };
}

function storeOf(
  store: HostConfig["store"],
  baseDir: string,
  secret: (path: string, name: string) => Secret | undefined,
  problems: string[],
): StoreConfig | undefined {
  if (store?.kind !== "postgres") {
    return {
      kind: "sqlite",
      path: resolve(baseDir, store?.path ?? SqliteStoreSchema.properties.path.default),
    };
  }
  const url = secret("store.url_env", store.url_env);
  if (!url) return undefined;
  const problem = postgresUrlProblem(url.reveal());
  if (problem) {
    problems.push(`store.url_env: ${store.url_env} ${problem}`);
    return undefined;
  }
  const defaults = PostgresStoreSchema.properties;
  return {
    kind: "postgres",
    url,
    urlEnv: store.url_env,
    leaseSeconds: store.lease_seconds ?? defaults.lease_seconds.default,
    poolSize: store.pool_size ?? defaults.pool_size.default,
  };
}

/** Why a connection URL is not one for PostgreSQL; never quotes the URL, which may hold a password. */
function postgresUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "does not hold a URL (expected postgres://user@host:5432/database)";
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return `holds a ${url.protocol}// URL; expected postgres://user@host:5432/database`;
  }
  if (url.hostname === "" && !url.searchParams.has("host")) return "names no host";
  return undefined;
}

function compileOrReport(
  schema: Record<string, unknown>,
  path: string,
  problems: string[],
): ToolSchemaValidator | undefined {
  try {
    return compileToolSchema(schema);
  } catch (error) {
    problems.push(`${path}: does not compile: ${(error as Error).message}`);
    return undefined;
  }
}
