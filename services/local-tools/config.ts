import { resolve } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import type { ConfigResult as Result } from "../../kit/service-cli.js";
import { envSecrets, loadServiceConfig } from "../../kit/service-config.js";
import { check, compile, StringEnum } from "../../protocol/validation.js";
import { listenOf } from "../../runtime/addresses.js";
import { readJsonFile } from "../../runtime/config-file.js";

const strict = { additionalProperties: false } as const;
const EnvName = Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" });
const Seconds = (max: number, fallback: number, description: string) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: max, default: fallback, description }));

export const LocalToolsConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(
      Type.String({ default: "127.0.0.1:8082", description: "host:port; loopback by default." }),
    ),
    token_env: Type.Optional(
      Type.String({
        ...EnvName,
        default: "LOCAL_TOOLS_KEY",
        description: "Holds the token Brain sends (the bindings' token_env).",
      }),
    ),
    operator_token_env: Type.Optional(
      Type.String({
        ...EnvName,
        default: "LOCAL_TOOLS_OPERATOR_KEY",
        description: "Holds the token people answer approvals with; must differ from the tools token.",
      }),
    ),
    store: Type.Optional(
      Type.String({
        minLength: 1,
        default: "./local-tools.db",
        description: "SQLite file of approvals, relative to this file.",
      }),
    ),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
    keep_alive_seconds: Seconds(300, 15, "Keep-alive comment interval on event streams."),
    approvals: Type.Optional(
      Type.Object(
        {
          default_timeout_seconds: Seconds(
            86_000,
            600,
            "How long a question waits when the call names no timeout.",
          ),
          max_timeout_seconds: Seconds(86_000, 3600, "The longest wait a call may ask for."),
          progress_seconds: Seconds(
            3600,
            5,
            "How often a waiting call repeats its waiting_for_operator progress.",
          ),
          max_pending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 })),
          max_pending_per_tenant: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 100 })),
          max_question_chars: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 4096 })),
        },
        strict,
      ),
    ),
    wait: Type.Optional(
      Type.Object(
        {
          max_seconds: Seconds(86_000, 3600, "The longest wait a call may ask for."),
          progress_seconds: Seconds(3600, 1, "How often wait reports progress."),
        },
        strict,
      ),
    ),
  },
  { ...strict, title: "local-tools config" },
);

export type LocalToolsConfigFile = Static<typeof LocalToolsConfigSchema>;

/** The config with every default filled in, paths resolved and tokens read. */
export interface LocalToolsConfig {
  host: string;
  port: number;
  tokenEnv: string;
  operatorTokenEnv: string;
  token: string;
  operatorToken: string;
  storePath: string;
  logLevel: string;
  keepAliveMs: number;
  approvals: {
    defaultTimeoutSeconds: number;
    maxTimeoutSeconds: number;
    progressMs: number;
    maxPending: number;
    maxPendingPerTenant: number;
    maxQuestionChars: number;
  };
  wait: { maxSeconds: number; progressMs: number };
}

export type ConfigResult = Result<LocalToolsConfig>;

const validate = compile<LocalToolsConfigFile>(LocalToolsConfigSchema);

/** Check a parsed config completely, against the environment too; every problem is reported. */
export function resolveLocalToolsConfig(raw: unknown, env: NodeJS.ProcessEnv, baseDir: string): ConfigResult {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const file = checked.value;
  const problems: string[] = [];
  const listen = listenOf(file.listen ?? "127.0.0.1:8082", problems);
  const tokenEnv = file.token_env ?? "LOCAL_TOOLS_KEY";
  const operatorTokenEnv = file.operator_token_env ?? "LOCAL_TOOLS_OPERATOR_KEY";
  const secret = envSecrets(env, problems);
  const token = secret("token_env", tokenEnv, "the token Brain sends")?.reveal() ?? "";
  const operatorToken =
    secret("operator_token_env", operatorTokenEnv, "the operators' token")?.reveal() ?? "";
  if (token && token === operatorToken) {
    problems.push(
      `operator_token_env: ${operatorTokenEnv} holds the same token as ${tokenEnv}; the operator token must differ, or Brain's token could answer approvals`,
    );
  }
  const approvals = file.approvals ?? {};
  const maxTimeout = approvals.max_timeout_seconds ?? 3600;
  const defaultTimeout = approvals.default_timeout_seconds ?? Math.min(600, maxTimeout);
  if (defaultTimeout > maxTimeout) {
    problems.push("approvals.default_timeout_seconds: must not exceed approvals.max_timeout_seconds");
  }
  if (problems.length > 0 || !listen) return { ok: false, problems };
  return {
    ok: true,
    config: {
      ...listen,
      tokenEnv,
      operatorTokenEnv,
      token,
      operatorToken,
      storePath: resolve(baseDir, file.store ?? "./local-tools.db"),
      logLevel: file.log_level ?? "info",
      keepAliveMs: (file.keep_alive_seconds ?? 15) * 1000,
      approvals: {
        defaultTimeoutSeconds: defaultTimeout,
        maxTimeoutSeconds: maxTimeout,
        progressMs: (approvals.progress_seconds ?? 5) * 1000,
        maxPending: approvals.max_pending ?? 1000,
        maxPendingPerTenant: approvals.max_pending_per_tenant ?? 100,
        maxQuestionChars: approvals.max_question_chars ?? 4096,
      },
      wait: {
        maxSeconds: file.wait?.max_seconds ?? 3600,
        progressMs: (file.wait?.progress_seconds ?? 1) * 1000,
      },
    },
  };
}

/** Read and schema-check a config file, without the environment (the operator CLI needs no tools token). */
export function readLocalToolsConfigFile(
  path: string,
): { ok: true; file: LocalToolsConfigFile } | { ok: false; problems: string[] } {
  const read = readJsonFile(path);
  if (!read.ok) return read;
  const checked = check(validate, read.value);
  return checked.ok ? { ok: true, file: checked.value } : checked;
}

export function loadLocalToolsConfig(path: string, env: NodeJS.ProcessEnv = process.env): ConfigResult {
  return loadServiceConfig(path, env, resolveLocalToolsConfig);
}
