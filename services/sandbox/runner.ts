import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import type { Readable, Writable } from "node:stream";
import { CappedOutput } from "./capped-output.js";
import type { RunCgroup } from "./cgroups.js";
import { BLOCK_FD, INFO_FD, SECCOMP_FD, STARTED_BYTE } from "./launch-command.js";
import type { StreamName } from "./progress-batcher.js";

class NoChildPid extends Error {}

/**
 * Give `pid` and what it starts niceness `nice`, and the same to its session's autogroup: where
 * the kernel groups processes by session (sched_autogroup), a process's own niceness only ranks
 * it within its session, and each run is a session of its own.
 */
function lowerPriority(pid: number, nice: number): void {
  setPriority(pid, nice);
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // no autogroups on this kernel (or none this service may set): the process's own niceness stands
  }
}
/** bwrap's report is a few hundred characters; more is not bwrap's. */
const MAX_INFO_CHARS = 65_536;

/** The pid in what bwrap wrote on INFO_FD; none when it failed (or was killed) before writing it all. */
function childPidOf(info: string): number | undefined {
  try {
    const pid = (JSON.parse(info) as { "child-pid"?: unknown })["child-pid"];
    return Number.isInteger(pid) ? (pid as number) : undefined;
  } catch {
    return undefined;
  }
}

export interface SpawnRequest {
  command: { file: string; args: string[] };
  /** The host user and group the whole sandbox runs as. */
  uid: number;
  gid: number;
  maxOutputBytes: number;
  /** The niceness the sandbox's processes run at (0 leaves the service's). */
  nice: number;
  /** The cgroups the sandbox goes in before its program runs; released when it ends. */
  cgroup?: RunCgroup;
  /** The seccomp filter bwrap reads from SECCOMP_FD (the command must say `--seccomp`). */
  seccomp?: Buffer;
}

export interface StartRequest {
  stdin: string | undefined;
  timeoutMs: number;
  /** Called with the kept part of the output as it arrives. */
  onOutput?: (stream: StreamName, text: string) => void;
}

/** How a run ended: on its own, at the wall-clock limit, or killed because its caller went away. */
export type RunEnd = "exited" | "timed_out" | "cancelled";

export interface RunOutcome {
  end: RunEnd;
  /** The program's exit code (128 + signal when a signal ended it), or null when the service killed the sandbox. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
  /** The kernel killed one of its processes at the sandbox's memory limit (its memory cgroup's). */
  outOfMemory: boolean;
  /**
   * The run ended on its own without ever reaching its code (bwrap, or the interpreter before
   * the code, failed): nothing of the code ran. `stderr` says why, for the operator's log.
   */
  setupFailed: boolean;
}

export interface RunSnapshot {
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
}

/**
 * One sandboxed process tree. It is spawned first and sets itself up while bwrap waits on
 * BLOCK_FD; `start()` lets the program run and starts its clock, so a sandbox can be made before
 * the call that uses it. Killing it kills bwrap's process group: bwrap, and the program, which is
 * pid 1 of the sandbox's pid namespace (or dies with bwrap, once it runs), and whose death takes
 * every process of the namespace along, however they forked.
 */
export class Run {
  readonly done: Promise<RunOutcome>;
  readonly #child: ChildProcess;
  readonly #stdout: CappedOutput;
  readonly #stderr: CappedOutput;
  #startedAt: number | undefined;
  #onOutput: StartRequest["onOutput"];
  #timer: NodeJS.Timeout | undefined;
  #end: RunEnd = "exited";
  #outcome: RunOutcome | undefined;
  #endedAt: number | undefined;
  /** STARTED_BYTE came: the interpreter reached the code. */
  #reachedCode = false;
  /** Resolves once the sandbox has its niceness and is in its cgroup: only then may its program run. */
  readonly #confined: Promise<void>;
  /** Why the sandbox was killed before its program could run, for the operator's log. */
  #setupError: string | undefined;

  constructor(request: SpawnRequest) {
    this.#stdout = new CappedOutput(request.maxOutputBytes);
    this.#stderr = new CappedOutput(request.maxOutputBytes);
    this.#child = spawn(request.command.file, request.command.args, {
      uid: request.uid,
      gid: request.gid,
      // nothing of the service's environment (its token least of all) reaches the sandbox
      env: {},
      // its own process group: bwrap's pid-1 reaper stays in it, so one group kill reaches the
      // sandbox even while bwrap is still setting up, before --die-with-parent is armed
      detached: true,
      stdio: ["pipe", "pipe", "pipe", "pipe", "pipe", ...(request.seccomp ? (["pipe"] as const) : [])],
    });
    // a sandbox that dies early (or code that exits without reading stdin) closes these pipes:
    // that is its outcome, not the service's failure
    this.#child.stdin?.on("error", () => {});
    this.#block?.on("error", () => {});
    if (request.seccomp) {
      const filter = (this.#child.stdio as readonly unknown[])[SECCOMP_FD] as Writable;
      filter.on("error", () => {});
      filter.end(request.seccomp);
    }
    const { cgroup } = request;
    this.#confined = this.#confine(request.nice, cgroup);
    // start() acts on a failure; one while the sandbox waits (bwrap failed) shows in its outcome
    this.#confined.catch(() => {});
    this.done = this.#watch(cgroup).then((outcome) => {
      clearTimeout(this.#timer);
      this.#outcome = outcome;
      this.#endedAt = Date.now();
      cgroup?.release();
      return outcome;
    });
  }

  /** Let the program run, with its stdin, its wall-clock limit and a listener for its output. */
  start(request: StartRequest): void {
    if (this.#startedAt !== undefined) throw new Error("a run starts once");
    this.#startedAt = performance.now();
    this.#onOutput = request.onOutput;
    if (this.#outcome) return;
    this.#timer = setTimeout(() => this.kill("timed_out"), request.timeoutMs);
    this.#confined.then(
      () => {
        if (!this.running || this.#end !== "exited") return;
        this.#child.stdin?.end(request.stdin ?? "");
        this.#block?.end("x");
      },
      (error: Error) => {
        // no child pid: bwrap failed before it made one, and its outcome says why
        if (!(error instanceof NoChildPid)) {
          this.#setupError = `cannot confine the sandbox: ${error.message}`;
        }
        this.#killGroup();
      },
    );
  }

  /** Spawned and not yet started: a sandbox waiting for its program. */
  get waiting(): boolean {
    return this.#startedAt === undefined && this.#outcome === undefined;
  }

  get running(): boolean {
    return this.#outcome === undefined;
  }

  /** How it ended, once it has. */
  get outcome(): RunOutcome | undefined {
    return this.#outcome;
  }

  /** When it ended (epoch ms), once it has. */
  get endedAt(): number | undefined {
    return this.#endedAt;
  }

  /** The output so far, for a job's status. */
  snapshot(): RunSnapshot {
    return {
      stdout: this.#stdout.text(),
      stderr: this.#stderr.text(),
      truncated: this.#stdout.truncated || this.#stderr.truncated,
      durationMs: this.#elapsed(),
    };
  }

  /** Kill the whole sandbox now; the first reason given is the one reported. */
  kill(reason: Exclude<RunEnd, "exited">): void {
    if (this.#outcome) return;
    if (this.#end === "exited") this.#end = reason;
    this.#killGroup();
  }

  #killGroup(): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // the group is already gone
    }
  }

  /**
   * Read the child's pid bwrap reports on INFO_FD, lower its priority and move it into `cgroup`,
   * all before it may run: every process of the sandbox descends from it.
   */
  #confine(nice: number, cgroup: RunCgroup | undefined): Promise<void> {
    const info = this.#child.stdio[INFO_FD] as Readable | null;
    if (!info) return Promise.reject(new Error("bwrap's info pipe is missing"));
    return new Promise((resolve, reject) => {
      let text = "";
      // at the first whole report, not at the pipe's end: bwrap closes it milliseconds later
      const onData = (chunk: Buffer) => {
        text += chunk;
        const childPid = childPidOf(text);
        if (childPid === undefined && text.length <= MAX_INFO_CHARS) return;
        info.off("data", onData).off("end", onEnd).resume();
        if (childPid === undefined) return reject(new NoChildPid());
        try {
          if (nice > 0) lowerPriority(childPid, nice);
          cgroup?.place(childPid);
          resolve();
        } catch (error) {
          reject(error);
        }
      };
      const onEnd = () => reject(new NoChildPid());
      info.on("data", onData).once("end", onEnd).once("error", onEnd);
    });
  }

  /**
   * A stdout chunk without STARTED_BYTE, which the interpreter writes before the program can
   * write anything. Were anything to come first, it would be the program's: kept whole, and the
   * run counted as started, the side that is never retried.
   */
  #programPart(chunk: Buffer): Buffer {
    if (this.#reachedCode) return chunk;
    this.#reachedCode = true;
    return chunk[0] === STARTED_BYTE ? chunk.subarray(1) : chunk;
  }

  get #block(): Writable | undefined {
    return (this.#child.stdio[BLOCK_FD] as Writable | null) ?? undefined;
  }

  #elapsed(): number {
    return this.#startedAt === undefined ? 0 : Math.round(performance.now() - this.#startedAt);
  }

  async #watch(cgroup: RunCgroup | undefined): Promise<RunOutcome> {
    const child = this.#child;
    const read = (stream: Readable | null | undefined, output: CappedOutput, name: StreamName) =>
      new Promise<void>((resolve) => {
        if (!stream) return resolve();
        stream.on("data", (chunk: Buffer) => {
          const text = output.push(name === "stdout" ? this.#programPart(chunk) : chunk);
          if (text) this.#onOutput?.(name, text);
        });
        stream.once("close", resolve);
        stream.once("error", () => resolve());
      });
    const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
      child.once("error", (error) => resolve({ code: null, error }));
      child.once("exit", (code) => resolve({ code }));
    });
    const [exit] = await Promise.all([
      exited,
      read(child.stdout, this.#stdout, "stdout"),
      read(child.stderr, this.#stderr, "stderr"),
    ]);
    const stderr = [this.#stderr.text(), this.#setupError].filter(Boolean).join("\n");
    // never by what is on stderr or the exit code: code can print and exit as bwrap does
    const setupFailed = exit.error !== undefined || !this.#reachedCode;
    return {
      end: this.#end,
      exitCode: this.#end === "exited" ? exit.code : null,
      stdout: this.#stdout.text(),
      stderr: exit.error ? `cannot start the sandbox: ${exit.error.message}` : stderr,
      truncated: this.#stdout.truncated || this.#stderr.truncated,
      durationMs: this.#elapsed(),
      outOfMemory: (cgroup?.oomKills() ?? 0) > 0,
      setupFailed: setupFailed && this.#end === "exited",
    };
  }
}
