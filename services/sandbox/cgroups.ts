import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";

/** The cgroup v1 controllers runs are put in: memory for a limit, cpu for a fair share. */
export type Controller = "memory" | "cpu";

/** Where every distribution mounts a cgroup v1 controller. */
export const v1Root = (controller: Controller) => `/sys/fs/cgroup/${controller}`;
/** A file every cgroup of the controller has: a directory without it is not one. */
const MARKER: Record<Controller, string> = { memory: "memory.limit_in_bytes", cpu: "cpu.shares" };
// a sandbox killed as a process group leaves its pid 1 dying for a moment after bwrap has gone
const REMOVE_RETRY_MS = 20;
const REMOVE_ATTEMPTS = 100;
const SERVICE_PREFIX = "brain-sandbox-";
/** Services opened by this process: one process may run several (the tests do). */
let opened = 0;

/**
 * The service's own cgroup in a controller's cgroup v1 hierarchy, from the text of
 * /proc/self/cgroup (`ID:controllers:path` per line), or undefined when the controller has no
 * v1 hierarchy. Pure.
 */
export function ownCgroup(procSelfCgroup: string, controller: Controller): string | undefined {
  for (const line of procSelfCgroup.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    if (
      line
        .slice(first + 1, second)
        .split(",")
        .includes(controller)
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

/** The kernel's weight of a process at niceness `nice` (1024 at 0, about 1.25 times less per step), as cpu.shares. Pure. */
export function sharesAtNice(nice: number): number {
  return Math.max(2, Math.round(1024 / 1.25 ** nice));
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
 * One controller's cgroups for sandboxes: a directory of the service process's under a parent it
 * may write (by default its own cgroup, so whatever limits the service limits its runs too), in it
 * one per tenant, and in that one per run. Siblings share alike (cpu.shares), so each tenant gets
 * the same share of the CPU however many runs and processes it has, and each run the same share
 * of its tenant's.
 */
export class ControllerCgroups {
  #next = 0;
  #closed = false;
  readonly #removals = new Set<Promise<void>>();

  private constructor(
    readonly controller: Controller,
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Open the service's directory under `parent`, removing what services that died without
   * closing theirs left there, and check a run's cgroup can be made. Throws with what went wrong.
   */
  static open(controller: Controller, parent: string, logger: Logger, nice = 0): ControllerCgroups {
    if (!existsSync(join(parent, MARKER[controller]))) {
      throw new Error(
        `${parent} is not a cgroup v1 ${controller} directory (it has no ${MARKER[controller]})`,
      );
    }
    for (const entry of readdirSync(parent)) {
      const pid = Number(entry.slice(SERVICE_PREFIX.length).split("-")[0]);
      if (entry.startsWith(SERVICE_PREFIX) && Number.isInteger(pid) && !alive(pid)) {
        new ControllerCgroups(controller, join(parent, entry), logger).#removeAll();
      }
    }
    const name = `${SERVICE_PREFIX}${process.pid}-${++opened}`;
    const cgroups = new ControllerCgroups(controller, join(parent, name), logger);
    mkdirSync(cgroups.dir, { recursive: true });
    // all runs together weigh as one process at limits.nice against the rest of the host
    if (controller === "cpu") writeFileSync(join(cgroups.dir, "cpu.shares"), String(sharesAtNice(nice)));
    cgroups.remove(cgroups.create("probe", 16 * 1024 * 1024));
    return cgroups;
  }

  /** A new cgroup for one run of `tenantId`; memory limited to `memoryBytes`, swap counted in. */
  create(tenantId: string, memoryBytes: number): string {
    const tenantDir = join(
      this.dir,
      `tenant-${createHash("sha256").update(tenantId).digest("hex").slice(0, 16)}`,
    );
    mkdirSync(tenantDir, { recursive: true });
    const dir = join(tenantDir, `run-${++this.#next}`);
    mkdirSync(dir);
    if (this.controller !== "memory") return dir;
    try {
      writeFileSync(join(dir, "memory.limit_in_bytes"), String(memoryBytes));
      // without it a run could go on into swap; absent where the kernel does not account swap
      const swap = join(dir, "memory.memsw.limit_in_bytes");
      if (existsSync(swap)) writeFileSync(swap, String(memoryBytes));
    } catch (error) {
      rmdirSync(dir);
      throw error;
    }
    return dir;
  }

  /** Remove a run's cgroup once its processes are gone, and its tenant's when that is empty. */
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
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") break;
        if (code !== "EBUSY" || attempt === REMOVE_ATTEMPTS) {
          this.logger.warn({ err: error, cgroup: dir }, "a run's cgroup could not be removed");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, REMOVE_RETRY_MS));
      }
    }
    try {
      rmdirSync(join(dir, ".."));
    } catch {
      // the tenant has other runs
    }
  }

  /** Remove the directory and every cgroup in it; one still in use stays, and is logged. */
  #removeAll(): void {
    const removeTree = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) removeTree(join(dir, entry.name));
      }
      rmdirSync(dir);
    };
    try {
      removeTree(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      this.logger.warn({ err: error, cgroup: this.dir }, "a sandbox service's cgroup could not be removed");
    }
  }
}

/** The cgroups of one run, one per controller in use: every process of the run goes in all of them. */
export class RunCgroup {
  constructor(private readonly parts: readonly { cgroups: ControllerCgroups; dir: string }[]) {}

  /** Move a process in; the processes it starts from then on are in too. */
  place(pid: number): void {
    for (const { dir } of this.parts) writeFileSync(join(dir, "cgroup.procs"), String(pid));
  }

  /** How many of its processes the kernel killed for going over its memory limit. */
  oomKills(): number {
    const memory = this.parts.find((part) => part.cgroups.controller === "memory");
    if (!memory) return 0;
    try {
      return oomKillsOf(readFileSync(join(memory.dir, "memory.oom_control"), "utf8"));
    } catch {
      return 0;
    }
  }

  /** Remove them once the run's last process has gone. */
  release(): void {
    for (const { cgroups, dir } of this.parts) cgroups.remove(dir);
  }
}

/** The controllers in use, each optional: runs get a cgroup in each. */
export class SandboxCgroups {
  constructor(private readonly controllers: readonly ControllerCgroups[]) {}

  get dirs(): Partial<Record<Controller, string>> {
    return Object.fromEntries(this.controllers.map((cgroups) => [cgroups.controller, cgroups.dir]));
  }

  /** The cgroups of a new run of `tenantId`, or undefined when no controller is in use. */
  create(tenantId: string, memoryBytes: number): RunCgroup | undefined {
    if (this.controllers.length === 0) return undefined;
    const parts: { cgroups: ControllerCgroups; dir: string }[] = [];
    try {
      for (const cgroups of this.controllers)
        parts.push({ cgroups, dir: cgroups.create(tenantId, memoryBytes) });
    } catch (error) {
      new RunCgroup(parts).release();
      throw error;
    }
    return new RunCgroup(parts);
  }

  async close(): Promise<void> {
    await Promise.all(this.controllers.map((cgroups) => cgroups.close()));
  }
}
