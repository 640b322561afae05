import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const BRAIN_BIN = join(ROOT, "dist/src/cli/main.js");

/** Run the built `brain` command to completion. */
export function runBrain(args: string[], env: Record<string, string> = {}, input?: string) {
  const result = spawnSync(process.execPath, [BRAIN_BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 15_000,
    ...(input !== undefined && { input }),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
