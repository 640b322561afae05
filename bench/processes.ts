import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface NodeProcess<T> {
  child: ChildProcess;
  /** What the ready line yielded (a URL). */
  ready: T;
  /** The last lines of stdout and stderr, for an error message when something goes wrong. */
  tail: () => string;
  memory: () => ProcessMemory;
  /** CPU time (user + system) the process has used so far, in seconds. */
  cpuSeconds: () => number;
  /**
   * CPU time of its main thread alone: a Node process's JavaScript, against V8's compiler and GC
   * helper threads, which the process's figure counts too.
   */
  mainThreadCpuSeconds: () => number;
  /** The next stdout or stderr line that `pick` accepts, with what it returned. */
  nextLine: <U>(pick: (line: string) => U | undefined, timeoutMs?: number) => Promise<U>;
  /** SIGTERM, then SIGKILL if it has not exited in 10 s; a CPU profile is written on a clean exit. */
  stop: () => Promise<void>;
}

export interface ProcessMemory {
  rssBytes: number;
  /** The highest RSS since the process started (VmHWM). */
  peakRssBytes: number;
}

const TAIL_LINES = 50;

/** A process's memory as the kernel counts it, from /proc: what an operator would see. */
export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssBytes: kib("VmRSS") * 1024, peakRssBytes: kib("VmHWM") * 1024 };
}

/** Linux counts CPU time in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export function processCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

/** The CPU time of the process's main thread alone: its thread id is the process id. */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** utime + stime of a /proc stat file, a process's or a thread's (the same layout). */
function cpuSecondsOf(statPath: string): number {
  const stat = readFileSync(statPath, "utf8");
  // the fields after the command name, which may itself hold spaces and parentheses
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Every process the harness started that has not exited yet. */
const started = new Set<ChildProcess>();
/** Every directory a benchmark made in the system's temporary directory and has not removed. */
const temporary = new Set<string>();

/** A new directory in the system's temporary directory, removed by the harness if it is stopped. */
export function makeTemporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporary.add(dir);
  return dir;
}

export function removeTemporaryDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  temporary.delete(dir);
}

/**
 * Stop every process the harness started that still runs, then remove the directories: for a
 * harness stopped before its benchmarks end, whose services and Brains would outlive it.
 */
export async function stopEverythingStarted(): Promise<void> {
  const exits = [...started].map((child) => new Promise((resolve) => child.once("exit", resolve)));
  for (const child of started) child.kill("SIGTERM");
  await Promise.race([Promise.all(exits), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  for (const dir of temporary) removeTemporaryDir(dir);
}

/**
 * Spawn `node [execArgv] args…` from the repository root and resolve once a stdout line satisfies
 * `ready`. Fails if the process exits first or is not ready within `timeoutMs`.
 */
export function startNode<T>(options: {
  root: string;
  args: string[];
  env: Record<string, string>;
  execArgv?: string[];
  /** A program that runs Node itself, with its arguments before Node's: valgrind, say. */
  launcher?: readonly string[];
  ready: (line: string) => T | undefined;
  timeoutMs?: number;
}): Promise<NodeProcess<T>> {
  const [command = process.execPath, ...args] = [
    ...(options.launcher ?? []),
    process.execPath,
    ...(options.execArgv ?? []),
    ...options.args,
  ];
  const child = spawn(command, args, {
    cwd: options.root,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  child.once("exit", () => started.delete(child));
  const lines: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
    for (const watcher of watchers) watcher(line);
  };
  const nextLine = <U>(pick: (line: string) => U | undefined, timeoutMs = 10_000) =>
    new Promise<U>((resolve, reject) => {
      const timer = setTimeout(() => {
        watchers.delete(watch);
        reject(new Error(`no such line in ${timeoutMs} ms:\n${tail()}`));
      }, timeoutMs);
      const watch = (line: string) => {
        const value = pick(line);
        if (value === undefined) return;
        clearTimeout(timer);
        watchers.delete(watch);
        resolve(value);
      };
      watchers.add(watch);
    });
  const tail = () => lines.join("\n");
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill("SIGTERM");
    });
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", keep);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.args[0]} was not ready in time:\n${tail()}`));
    }, options.timeoutMs ?? 15_000);
    const early = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${options.args[0]} exited with ${code} before it was ready:\n${tail()}`));
    };
    child.once("exit", early);
    let found = false;
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      keep(line);
      if (found) return;
      const value = options.ready(line);
      if (value === undefined) return;
      found = true;
      clearTimeout(timer);
      child.off("exit", early);
      const pid = child.pid as number;
      resolve({
        child,
        ready: value,
        tail,
        memory: () => processMemory(pid),
        cpuSeconds: () => processCpuSeconds(pid),
        mainThreadCpuSeconds: () => mainThreadCpuSeconds(pid),
        nextLine,
        stop,
      });
    });
  });
}

/** The example echo service of examples/tools: the service Brain calls and the raw POST targets. */
export function startEchoService(root: string, token: string): Promise<NodeProcess<string>> {
  return startNode({
    root,
    args: ["examples/tools/server.mjs"],
    env: { BRAIN_TOOLS_KEY: token, PORT: "0" },
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
}
