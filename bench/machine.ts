import { execFileSync } from "node:child_process";
import { arch, cpus, freemem, loadavg, platform, release, totalmem } from "node:os";

/** What the figures were measured on: they mean little without it. */
export function describeMachine(root: string, brainRoot = root) {
  const cores = cpus();
  return {
    cpu: cores[0]?.model ?? "unknown",
    cores: cores.length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    free_memory_gib: Math.round((freemem() / 2 ** 30) * 10) / 10,
    load_average_1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    commit: gitCommit(brainRoot),
  };
}

export type Machine = ReturnType<typeof describeMachine>;

function gitCommit(root: string): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    return dirty ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return "unknown";
  }
}
