import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";

/** Where every distribution mounts cgroup v1's memory controller. */
export const V1_MEMORY_ROOT = "/sys/fs/cgroup/memory";
// a sandbox killed as a process group leaves its pid 1 dying for a moment after bwrap has gone
const REMOVE_RETRY_MS = 20;
const REMOVE_ATTEMPTS = 100;
const SERVICE_PREFIX = "brain-sandbox-";
/** Services opened by this process: one process may run several (the tests do). */
let opened = 0;

/**
 * The service's own cgroup in the memory hierarchy of cgroup v1, from the text of
 * /proc/self/cgroup (`ID:controllers:path` per line), or undefined when memory has no v1
 * hierarchy. Pure.
 */
export function ownMemoryCgroup(procSelfCgroup: string): string | undefined {
  for (const line of procSelfCgroup.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    if (
      line
        .slice(first + 1, second)
        .split(",")
        .includes("memory")
    )
      return line.slice(second + 1);
  }
  return undefined;
}

/** How many processes the kernel's OOM killer ended in a cgroup, from its memory.oom_control. Pure. */
export function oomKillsOf(oomControl: string): number {
  const match = /^oom_kill (\d+)$/m.exec(oomControl);
  return match ? Number(match[1]) : 0;
}

/** The cgroup of one sandbox: every process of it is in here, and together they get its memory. */
export class RunCgroup {
  constructor(
    readonly dir: string,
    private readonly owner: MemoryCgroups,
  ) {}

  /** Move a process in; the processes it starts from then on are in too. */
  place(pid: number): void {
    writeFileSync(join(this.dir, "cgroup.procs"), String(pid));
  }

  /** How many of its processes the kernel killed for going over its memory limit. */
  oomKills(): number {
    try {
      return oomKillsOf(readFileSync(join(this.dir, "memory.oom_control"), "utf8"));
    } catch {
      return 0;
    }
  }

  /** Remove it once its last process has gone. */
  release(): void {
    this.owner.remove(this.dir);
  }
}

/** Whether a process `pid` is alive (or, being another user's, at least there). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Memory cgroups (v1) for sandboxes: one directory of the service process's under a parent it
 * may write (by default its own cgroup, so whatever limits the service limits its sandboxes too),
 * and one child in it per sandbox, limited to the sandbox's memory with swap counted in.
 */
export class MemoryCgroups {
  #next = 0;
  #closed = false;
  readonly #removals = new Set<Promise<void>>();

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Open the service's directory under `parent`, removing what services that died without
   * closing theirs left there, and check a limited child can be made. Throws with what went wrong.
   */
  static open(parent: string, logger: Logger): MemoryCgroups {
    if (!existsSync(join(parent, "memory.limit_in_bytes"))) {
      throw new Error(`${parent} is not a cgroup v1 memory directory (it has no memory.limit_in_bytes)`);
    }
    for (const entry of readdirSync(parent)) {
      const pid = Number(entry.slice(SERVICE_PREFIX.length).split("-")[0]);
      if (entry.startsWith(SERVICE_PREFIX) && Number.isInteger(pid) && !alive(pid)) {
        new MemoryCgroups(join(parent, entry), logger).#removeAll();
      }
    }
    const name = `${SERVICE_PREFIX}${process.pid}-${++opened}`;
    const cgroups = new MemoryCgroups(join(parent, name), logger);
    mkdirSync(cgroups.dir, { recursive: true });
    const probe = cgroups.create(16 * 1024 * 1024);
    rmdirSync(probe.dir);
    return cgroups;
  }

  /** A new cgroup for one sandbox, limited to `limitBytes` of memory and swap together. */
  create(limitBytes: number): RunCgroup {
    const dir = join(this.dir, `run-${++this.#next}`);
    mkdirSync(dir);
    try {
      writeFileSync(join(dir, "memory.limit_in_bytes"), String(limitBytes));
      // without it a sandbox could go on into swap; absent where the kernel does not account swap
      const swap = join(dir, "memory.memsw.limit_in_bytes");
      if (existsSync(swap)) writeFileSync(swap, String(limitBytes));
    } catch (error) {
      rmdirSync(dir);
      throw error;
    }
    return new RunCgroup(dir, this);
  }

  /** Remove a sandbox's cgroup, waiting for its processes to be gone first. */
  remove(dir: string): void {
    const removal = this.#removeWhenEmpty(dir).finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
  }

  /** Remove the service's directory, once the cgroups of ended runs are gone. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#removals);
    this.#removeAll();
  }

  async #removeWhenEmpty(dir: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        rmdirSync(dir);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return;
        if (code !== "EBUSY" || attempt === REMOVE_ATTEMPTS) {
          this.logger.warn({ err: error, cgroup: dir }, "a sandbox's memory cgroup could not be removed");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, REMOVE_RETRY_MS));
      }
    }
  }

  /** Remove the directory and the runs' cgroups in it; one still in use stays, and is logged. */
  #removeAll(): void {
    try {
      for (const entry of readdirSync(this.dir, { withFileTypes: true })) {
        if (entry.isDirectory()) rmdirSync(join(this.dir, entry.name));
      }
      rmdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      this.logger.warn(
        { err: error, cgroup: this.dir },
        "a sandbox service's memory cgroup could not be removed",
      );
    }
  }
}
