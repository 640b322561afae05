import { isAbsolute, resolve } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import type { ConfigResult as Result } from "../../kit/service-cli.js";
import { envSecrets, loadServiceConfig } from "../../kit/service-config.js";
import { check, compile, defaultsOf, StringEnum, TaggedUnion } from "../../protocol/validation.js";
import { type Listen, listenOf, urlProblem } from "../../runtime/addresses.js";
import type { Secret } from "../../runtime/secret.js";
import type { ScopeMode } from "./paths.js";
import type { StorageLimits } from "./storage.js";

const strict = { additionalProperties: false } as const;
const EnvName = Type.String({
  pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
  description: "Name of an environment variable.",
});
const Count = (defaultValue: number, minimum: number, maximum: number, description: string) =>
  Type.Optional(Type.Integer({ minimum, maximum, default: defaultValue, description }));

const FilesystemSchema = Type.Object(
  {
    kind: Type.Literal("filesystem"),
    root: Type.Optional(
      Type.String({
        minLength: 1,
        default: "./data/storage",
        description: "Where objects live (ROOT/objects); relative to the config file. One service per root.",
      }),
    ),
  },
  strict,
);

const S3Schema = Type.Object(
  {
    kind: Type.Literal("s3"),
    bucket: Type.String({ minLength: 3, maxLength: 63, description: "The bucket; it must exist." }),
    region: Type.Optional(Type.String({ minLength: 1, default: "us-east-1" })),
    endpoint: Type.Optional(
      Type.String({ description: "An S3-compatible store's URL (MinIO, Ceph, R2, …); unset means AWS." }),
    ),
    force_path_style: Type.Optional(
      Type.Boolean({ description: "bucket in the path, not the host name; default: true with an endpoint" }),
    ),
    key_prefix: Type.Optional(
      Type.String({
        pattern: "^$|^[^/].*/$",
        description: 'Prepended to every key, such as "brain/"; "" by default.',
      }),
    ),
    access_key_id_env: EnvName,
    secret_access_key_env: EnvName,
    session_token_env: Type.Optional(EnvName),
    timeout_seconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 600,
        default: 30,
        description: "Per request to the store.",
      }),
    ),
  },
  strict,
);

export const LimitsSchema = Type.Object(
  {
    max_object_bytes: Count(8_388_608, 1, 1_073_741_824, "The largest object a write may store."),
    max_read_bytes: Count(
      262_144,
      1024,
      16_777_216,
      "The most bytes one read returns; read larger objects in parts.",
    ),
    quota_bytes: Count(268_435_456, 0, 1_099_511_627_776, "Total bytes of one scope's objects."),
    quota_objects: Count(10_000, 0, 10_000_000, "Objects one scope may hold."),
    max_list_limit: Count(1000, 1, 1000, "The most objects one storage_list page may ask for."),
  },
  strict,
);

export const StorageConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(Type.String({ default: "127.0.0.1:8093", description: "host:port to bind." })),
    token_env: Type.String({
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      description: "The environment variable holding the bearer token Brain sends (the binding's token_env).",
    }),
    scope: Type.Optional(
      StringEnum(["tenant", "session"], {
        default: "tenant",
        description: "tenant: a tenant's sessions share its files; session: each session has its own.",
      }),
    ),
    backend: Type.Optional(TaggedUnion("kind", [FilesystemSchema, S3Schema])),
    limits: Type.Optional(LimitsSchema),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
  },
  { ...strict, title: "Storage service config" },
);

type RawConfig = Static<typeof StorageConfigSchema>;
const DEFAULT_LIMITS = defaultsOf(LimitsSchema);

export type BackendConfig =
  | { kind: "filesystem"; root: string }
  | {
      kind: "s3";
      bucket: string;
      region: string;
      endpoint: string | undefined;
      forcePathStyle: boolean;
      keyPrefix: string;
      accessKeyId: Secret;
      secretAccessKey: Secret;
      sessionToken: Secret | undefined;
      timeoutMs: number;
    };

export interface StorageConfig {
  listen: Listen;
  token: Secret;
  scope: ScopeMode;
  backend: BackendConfig;
  limits: StorageLimits;
  logLevel: string;
}

export type ConfigResult = Result<StorageConfig>;

const validate = compile<RawConfig>(StorageConfigSchema);

/** Validate a parsed config and resolve defaults and secrets; every problem is reported. */
export function resolveStorageConfig(raw: unknown, env: NodeJS.ProcessEnv, baseDir: string): ConfigResult {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const config = checked.value;
  const problems: string[] = [];
  const secret = envSecrets(env, problems);
  const listen = listenOf(config.listen ?? "127.0.0.1:8093", problems);
  const token = secret("token_env", config.token_env, "the token Brain sends");

  const backend = resolveBackend(config.backend ?? { kind: "filesystem" }, baseDir, secret, problems);
  const limits = { ...DEFAULT_LIMITS, ...config.limits };
  const resolved: StorageLimits = {
    maxObjectBytes: limits.max_object_bytes,
    maxReadBytes: limits.max_read_bytes,
    quotaBytes: limits.quota_bytes,
    quotaObjects: limits.quota_objects,
    maxListLimit: limits.max_list_limit,
  };
  if (!listen || !token || !backend || problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    config: {
      listen,
      token,
      scope: config.scope ?? "tenant",
      backend,
      limits: resolved,
      logLevel: config.log_level ?? "info",
    },
  };
}

function resolveBackend(
  backend: NonNullable<RawConfig["backend"]>,
  baseDir: string,
  secret: ReturnType<typeof envSecrets>,
  problems: string[],
): BackendConfig | undefined {
  if (backend.kind === "filesystem") {
    const root = backend.root ?? "./data/storage";
    return { kind: "filesystem", root: isAbsolute(root) ? root : resolve(baseDir, root) };
  }
  if (backend.endpoint !== undefined) {
    const problem = urlProblem(backend.endpoint);
    if (problem) problems.push(`backend.endpoint: ${problem}`);
  }
  const accessKeyId = secret("backend.access_key_id_env", backend.access_key_id_env, "the S3 access key id");
  const secretAccessKey = secret(
    "backend.secret_access_key_env",
    backend.secret_access_key_env,
    "the S3 secret access key",
  );
  const sessionToken =
    backend.session_token_env === undefined
      ? undefined
      : secret("backend.session_token_env", backend.session_token_env, "the S3 session token");
  if (!accessKeyId || !secretAccessKey) return undefined;
  return {
    kind: "s3",
    bucket: backend.bucket,
    region: backend.region ?? "us-east-1",
    endpoint: backend.endpoint,
    forcePathStyle: backend.force_path_style ?? backend.endpoint !== undefined,
    keyPrefix: backend.key_prefix ?? "",
    accessKeyId,
    secretAccessKey,
    sessionToken,
    timeoutMs: Math.round((backend.timeout_seconds ?? 30) * 1000),
  };
}

export function loadStorageConfig(path: string, env: NodeJS.ProcessEnv = process.env): ConfigResult {
  return loadServiceConfig(path, env, resolveStorageConfig);
}
