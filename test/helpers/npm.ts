import { readdirSync, readFileSync } from "node:fs";

/**
 * What `npx brain` needs to run from a test as it runs for a user: npm's cache in `cacheDir` (npx
 * links the package there, and the test leaves nothing in the user's), offline, and without
 * scripts: the package is built already, and npx would run its `prepare` (a build into dist/)
 * while other tests read dist/.
 */
export function npxEnv(cacheDir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? cacheDir,
    npm_config_cache: cacheDir,
    npm_config_offline: "true",
    npm_config_ignore_scripts: "true",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
}

/**
 * The processes (pids) whose environment holds `NAME=VALUE`: everything a test started with that
 * mark and their descendants, however they were started. Empty where there is no /proc.
 */
export function processesMarked(name: string, value: string): number[] {
  const mark = `${name}=${value}`;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(mark);
      } catch {
        return false; // gone, or not ours
      }
    })
    .map(Number);
}
