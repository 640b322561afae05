import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { check, compile, StringEnum } from "../../src/validation.js";

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
    maxQuestionChars: number;
  };
  wait: { maxSeconds: number; progressMs: number };
}

export type ConfigResult = { ok: true; config: LocalToolsConfig } | { ok: false; problems: string[] };

const validate = compile<LocalToolsConfigFile>(LocalToolsConfigSchema);

/** host:port with a port from 0 to 65535; `[::1]:8082` for IPv6. */
export function parseListen(listen: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  const port = Number(match?.[2]);
  if (!match || port > 65535) return undefined;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ""), port };
}

/** Check a parsed config completely, against the environment too; every problem is reported. */
export function resolveLocalToolsConfig(raw: unknown, env: NodeJS.ProcessEnv, baseDir: string): ConfigResult {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const file = checked.value;
  const problems: string[] = [];
  const listen = parseListen(file.listen ?? "127.0.0.1:8082");
  if (!listen) problems.push(`listen: must be host:port, not "${file.listen}"`);
  const tokenEnv = file.token_env ?? "LOCAL_TOOLS_KEY";
  const operatorTokenEnv = file.operator_token_env ?? "LOCAL_TOOLS_OPERATOR_KEY";
  const token = env[tokenEnv] ?? "";
  const operatorToken = env[operatorTokenEnv] ?? "";
  if (!token) problems.push(`token_env: the environment variable ${tokenEnv} must be set and non-empty`);
  if (!operatorToken) {
    problems.push(
      `operator_token_env: the environment variable ${operatorTokenEnv} must be set and non-empty`,
    );
  }
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
):
  | { ok: true; raw: unknown; file: LocalToolsConfigFile; baseDir: string }
  | { ok: false; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return {
      ok: false,
      problems: [`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`],
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`(root): not valid JSON: ${(error as Error).message}`] };
  }
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  return { ok: true, raw, file: checked.value, baseDir: dirname(resolve(path)) };
}

export function loadLocalToolsConfig(path: string, env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const read = readLocalToolsConfigFile(path);
  return read.ok ? resolveLocalToolsConfig(read.raw, env, read.baseDir) : read;
}
