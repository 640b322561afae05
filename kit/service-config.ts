import { readJsonFile } from "../runtime/config-file.js";
import { envSecret, type Secret } from "../runtime/secret.js";
import type { ConfigResult } from "./service-cli.js";

/** Resolves a parsed config against the environment; relative paths in it resolve against `baseDir`. */
export type ConfigResolver<Config> = (
  raw: unknown,
  env: NodeJS.ProcessEnv,
  baseDir: string,
) => ConfigResult<Config>;

/**
 * Read a service's JSON config file and resolve it. A file that cannot be read or parsed is one
 * problem, in the words Brain uses for its own config; `resolve` reports every other one.
 */
export function loadServiceConfig<Config>(
  path: string,
  env: NodeJS.ProcessEnv,
  resolve: ConfigResolver<Config>,
): ConfigResult<Config> {
  const file = readJsonFile(path);
  return file.ok ? resolve(file.value, env, file.dir) : file;
}

/**
 * Reads the secrets a config names by environment variable (`token_env`, …). A missing or empty
 * one adds "FIELD: set the environment variable NAME to WHAT" to `problems`, one no header could
 * carry (a stray newline, say) says so, so every unusable secret is reported at once; a found one
 * is a Secret, which no log line or message can show.
 */
export function envSecrets(
  env: NodeJS.ProcessEnv,
  problems: string[],
): (field: string, name: string, what: string) => Secret | undefined {
  return (field, name, what) => {
    const read = envSecret(env, name, `set the environment variable ${name} to ${what}`);
    if (read.ok) return read.secret;
    problems.push(`${field}: ${read.problem}`);
    return undefined;
  };
}
