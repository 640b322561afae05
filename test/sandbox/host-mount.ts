import { spawnSync } from "node:child_process";
import type { TestContext } from "vitest";
import { REQUIRE_ALL } from "../helpers/host-needs.js";

/**
 * Mount a tmpfs at `dir` on the host itself, where the sandbox service under test sees it (a
 * private mount namespace would hide it from the service, which runs in the test's process).
 * Where the host forbids mounts the test is skipped, saying so; under REQUIRE_ALL it fails.
 * Returns the unmount, for the test's `finally`.
 */
export function mountTmpfs(ctx: TestContext, dir: string, options: string): () => void {
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { encoding: "utf8" });
  if (mounted.status !== 0) {
    const why = `a tmpfs mounted on the host (root with CAP_SYS_ADMIN): mount said ${mounted.stderr.trim() || mounted.error}`;
    if (process.env[REQUIRE_ALL] === "1") throw new Error(`this test needs ${why}`);
    ctx.skip(`needs ${why}`);
  }
  return () => {
    // lazily: a sandbox may still be letting go of it
    spawnSync("umount", ["-l", dir]);
  };
}
