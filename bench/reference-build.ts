import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ReferenceBuild {
  /** The commit, short. */
  commit: string;
  /** Where it is built: a root `startBrainProcess` can run `dist/src/cli/main.js` from. */
  root: string;
}

/**
 * Builds the Brain of git revision `ref` beside the working tree, for `--compare`: its files from
 * `git archive` into a directory named after the commit under the system's temporary directory,
 * kept for the next run. When its package-lock.json is the working tree's, its node_modules is a
 * link to the working tree's (better-sqlite3 compiles from source here: a minute saved per build);
 * otherwise `npm ci` installs its own.
 */
export function buildReference(root: string, ref: string, log: (line: string) => void): ReferenceBuild {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  const full = git("rev-parse", "--verify", `${ref}^{commit}`);
  const commit = full.slice(0, 12);
  const dir = join(tmpdir(), `brain-bench-ref-${commit}`);
  if (existsSync(join(dir, "dist/src/cli/main.js"))) return { commit, root: dir };
  log(`compare: building ${ref} (${commit}) in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${full} | tar -x -C "${dir}"`], { cwd: root, stdio: "inherit" });
  const sameLock =
    existsSync(join(root, "package-lock.json")) &&
    readFileSync(join(dir, "package-lock.json"), "utf8") ===
      readFileSync(join(root, "package-lock.json"), "utf8");
  const run = (command: string, args: string[]) =>
    execFileSync(command, args, { cwd: dir, stdio: ["ignore", "inherit", "inherit"], env: process.env });
  if (sameLock) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  else run("npm", ["ci"]);
  run("npm", ["run", "build"]);
  return { commit, root: dir };
}
