import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { processAlive } from "../helpers/processes.js";

/** The processes whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // gone while listed
    }
  }
  return children;
}

/** The directory of a Brain's config (`-config DIR/brain.json`), from its command line. */
function configDirOf(pid: number): string | undefined {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const config = args[args.indexOf("-config") + 1];
    return args.includes("-config") && config ? dirname(config) : undefined;
  } catch {
    return undefined;
  }
}

describe("npm run bench, stopped part way", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-bench-stop-"));
  const survivors: number[] = [];

  afterAll(() => {
    for (const pid of survivors) if (processAlive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops the services and Brains it started when it is killed", async () => {
    const harness = spawn(
      process.execPath,
      ["dist/bench/run.js", "--only", "overhead", "--sets", "1", "--out", join(dir, "results.json")],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => harness.once("exit", (code) => resolve(code)));
    harness.stdout.resume();
    harness.stderr.resume();
    // the services first, then the Brains, each in a directory of its own
    let children: number[] = [];
    const giveUpStarting = Date.now() + 60_000;
    while (Date.now() < giveUpStarting) {
      children = childrenOf(harness.pid as number);
      if (children.some((pid) => configDirOf(pid) !== undefined)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    survivors.push(...children);
    const dirs = children.map(configDirOf).filter((found) => found !== undefined);
    expect(dirs.length).toBeGreaterThan(0);
    expect(children.length).toBeGreaterThanOrEqual(3);

    harness.kill("SIGTERM");
    expect(await exited).toBe(143);
    const giveUpAt = Date.now() + 15_000;
    while (children.some(processAlive) && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 100));
    expect(children.filter(processAlive)).toEqual([]);
    expect(dirs.filter((found) => existsSync(found))).toEqual([]);
  }, 90_000);
});
