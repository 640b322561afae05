import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const BRAIN_BIN = join(ROOT, "dist/src/cli/main.js");

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `node script args…` to completion with only PATH, TMPDIR and `env` in its environment, from the
 * repository root unless `cwd` says otherwise (the script's path is relative to that).
 */
export function runNode(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string; input?: string } = {},
): CommandRun {
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd: options.cwd ?? ROOT,
    // the run's own temporary directory (test/helpers/temp-dir-setup.ts), so what it leaves is seen
    env: { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), ...env },
    encoding: "utf8",
    timeout: 15_000,
    ...(options.input !== undefined && { input: options.input }),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Run the built `brain` command to completion. */
export function runBrain(args: string[], env: Record<string, string> = {}, input?: string): CommandRun {
  return runNode(BRAIN_BIN, args, env, input === undefined ? {} : { input });
}
