import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import {
  type Controller,
  ControllerCgroups,
  ownCgroup,
  type RunCgroup,
  SandboxCgroups,
  v1Root,
} from "./cgroups.js";
import type { Language, SandboxConfig } from "./config.js";
import { SandboxError } from "./errors.js";
import { findHostLibraries } from "./host-libraries.js";
import { type Job, type JobStatus, Jobs, jobStatus } from "./jobs.js";
import { launchCommand } from "./launch-command.js";
import { type LayoutResult, resolveLayout, type SandboxLayout } from "./layout.js";
import { PROBES, probeAdvice } from "./probe.js";
import { installProgramLinks } from "./program-links.js";
import type { StreamName } from "./progress-batcher.js";
import { Run, type RunOutcome } from "./runner.js";
import { seccompFilter } from "./seccomp.js";
import { type Prepared, WarmSandboxes } from "./warm-sandboxes.js";
import {
  type ListEntry,
  listWorkspace,
  readWorkspaceFile,
  type WorkspaceDir,
  writeWorkspaceFile,
} from "./workspace-fs.js";
import { workspacePath } from "./workspace-path.js";
import { type Lease, type Owner, Workspaces } from "./workspaces.js";

export interface CodeRequest {
  language: Language;
  code: string;
  stdin?: string;
  timeoutMs: number;
}

export interface ExecOptions {
  /** Fires when the caller went away: the run is killed. */
  signal: AbortSignal;
  onOutput?: (stream: StreamName, text: string) => void;
}

/** The service's own files (the package holding this module): never visible to sandboxed code. */
function serviceRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
const PROBE_TIMEOUT_MS = 15_000;
/** A sandbox made ready that no call has taken for this long is killed. */
const WARM_IDLE_MS = 60_000;

/** What sandboxes of this config see of the host; never the workspaces or the service's own files. */
export function layoutOf(config: SandboxConfig): LayoutResult {
  const { libraries, languageDirs } = findHostLibraries(config.languages, config.programs);
  return resolveLayout({
    languages: config.languages,
    programs: config.programs,
    systemPaths: config.systemPaths,
    libraries,
    languageDirs,
    private: [config.stateDir, serviceRoot()],
    programsRoot: join(config.stateDir, "programs"),
  });
}

const pidFile = (stateDir: string) => join(stateDir, "service.pid");

/**
 * Mark the state directory as this process's: two services on one would hand out the same
 * workspace users and rebuild each other's program directories.
 */
function claimStateDir(stateDir: string): void {
  const path = pidFile(stateDir);
  const holder = existsSync(path) ? Number(readFileSync(path, "utf8")) : undefined;
  if (holder && isAlive(holder)) {
    throw new StartupError(
      `another sandbox service (pid ${holder}) uses state_dir ${stateDir}; stop it, or remove ${path} if it is not running`,
    );
  }
  writeFileSync(path, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The first directory above `path` that others cannot search, if any. */
function closedAncestor(path: string): string | undefined {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function jobEnd(outcome: RunOutcome) {
  return { end: outcome.end, exit_code: outcome.exitCode, duration_ms: outcome.durationMs };
}

export class StartupError extends Error {
  override name = "StartupError";
}

/** What a run loses when a controller's cgroups cannot be had, for the warning at start. */
const WITHOUT: Record<Controller, string> = {
  memory: "memory is limited per process only (limits.memory_bytes)",
  cpu: "the CPU is shared by run (the kernel's session groups), not by tenant",
};

/**
 * The cgroups of one controller that runs go in, as its setting (`memory_cgroup`, `cpu_cgroup`)
 * says: a directory given must work, `auto` uses the service's own cgroup when it can and says at
 * start when it cannot.
 */
function openController(
  controller: Controller,
  setting: string,
  config: SandboxConfig,
  logger: Logger,
): ControllerCgroups | undefined {
  const { nice } = config.limits;
  if (setting === "off") return undefined;
  if (setting !== "auto") {
    try {
      return ControllerCgroups.open(controller, setting, logger, nice);
    } catch (error) {
      throw new StartupError(
        `${controller}_cgroup ${setting}: ${(error as Error).message}; name a cgroup v1 ${controller} directory the service may write, or "auto" or "off"`,
      );
    }
  }
  try {
    const own = ownCgroup(readFileSync("/proc/self/cgroup", "utf8"), controller);
    if (own === undefined || !existsSync(v1Root(controller))) {
      throw new Error(`this host has no cgroup v1 ${controller} controller (cgroup v2 is not supported yet)`);
    }
    return ControllerCgroups.open(controller, join(v1Root(controller), own), logger, nice);
  } catch (error) {
    logger.warn(
      { reason: (error as Error).message },
      `runs get no ${controller} cgroup, so ${WITHOUT[controller]}; ` +
        `set ${controller}_cgroup to a cgroup directory the service may write, or to "off" to say so`,
    );
    return undefined;
  }
}

function openCgroups(config: SandboxConfig, logger: Logger): SandboxCgroups {
  const opened: ControllerCgroups[] = [];
  try {
    for (const [controller, setting] of [
      ["memory", config.memoryCgroup],
      ["cpu", config.cpuCgroup],
    ] as const) {
      const cgroups = openController(controller, setting, config, logger);
      if (cgroups) opened.push(cgroups);
    }
  } catch (error) {
    void new SandboxCgroups(opened).close();
    throw error;
  }
  return new SandboxCgroups(opened);
}

/**
 * The sandbox without HTTP: runs code for an owner in the owner's workspace, keeps jobs, and
 * reads and writes workspace files. Every method takes the owner from the call's identity.
 */
export class Sandbox {
  readonly #workspaces: Workspaces;
  readonly #jobs: Jobs;
  /** Each running run, with its tenant. */
  readonly #runs = new Map<Run, string>();
  readonly #warm: WarmSandboxes;
  readonly #sweeper: NodeJS.Timeout;
  readonly #seccomp: Buffer | undefined;

  private constructor(
    private readonly config: SandboxConfig,
    private readonly layout: SandboxLayout,
    private readonly logger: Logger,
    private readonly cgroups: SandboxCgroups,
  ) {
    const { limits } = config;
    this.#seccomp = config.seccomp === "default" ? seccompFilter() : undefined;
    if (config.seccomp === "default" && !this.#seccomp) {
      logger.warn(
        { arch: process.arch },
        "no seccomp filter for this architecture (only x86_64 has one): code gets every system call",
      );
    }
    const idleMs = limits.workspace_idle_seconds * 1000;
    this.#workspaces = new Workspaces(join(config.stateDir, "workspaces"), config.uids, idleMs, logger);
    this.#jobs = new Jobs(limits.max_jobs_per_session, limits.job_retention_seconds * 1000);
    this.#workspaces.open();
    this.#warm = new WarmSandboxes(limits.warm_sandboxes, WARM_IDLE_MS);
    rmSync(this.#runsDir, { recursive: true, force: true });
    mkdirSync(this.#runsDir, { mode: 0o711 });
    const interval = Math.min(
      Math.max(Math.min(idleMs, limits.job_retention_seconds * 1000) / 4, 50),
      60_000,
    );
    this.#sweeper = setInterval(() => this.sweep(Date.now()), interval);
    this.#sweeper.unref();
  }

  /**
   * Check the host can sandbox (root, bwrap, prlimit, every interpreter running inside), then open
   * the workspaces. Throws StartupError with what to do when something is missing.
   */
  static async open(config: SandboxConfig, logger: Logger): Promise<Sandbox> {
    if (process.getuid?.() !== 0) {
      throw new StartupError(
        "the sandbox service must start as root: it runs each workspace as a host user of its own " +
          `(sandbox_uids, from ${config.uids.first}), which only root can switch to; it never runs code as root`,
      );
    }
    for (const [what, path, pkg] of [
      ["bwrap", config.bwrap, "bubblewrap"],
      ["prlimit", config.prlimit, "util-linux"],
    ] as const) {
      try {
        accessSync(path, constants.X_OK);
      } catch {
        throw new StartupError(
          `${what} is not at ${path}: install ${pkg} (Debian: apt-get install -y ${pkg}) or set "${what}" in the config`,
        );
      }
    }
    mkdirSync(config.stateDir, { recursive: true, mode: 0o711 });
    // bwrap runs as the workspace's user, which must reach its workspace under the state directory
    chmodSync(config.stateDir, 0o711);
    const closed = closedAncestor(config.stateDir);
    if (closed) {
      throw new StartupError(
        `the sandbox users cannot reach state_dir ${config.stateDir}: ${closed} is not searchable by others; ` +
          `run chmod o+x ${closed}, or put state_dir elsewhere`,
      );
    }
    const resolved = layoutOf(config);
    if (!resolved.ok) throw new StartupError(resolved.problems.join("\n"));
    if (resolved.skipped.length > 0) {
      logger.info({ skipped: resolved.skipped }, "paths not on this host are left out of the sandbox");
    }
    // from here on the state directory is this process's, until close()
    claimStateDir(config.stateDir);
    let sandbox: Sandbox;
    try {
      installProgramLinks(join(config.stateDir, "programs"), resolved.links);
      const cgroups = openCgroups(config, logger);
      const { dirs } = cgroups;
      if (Object.keys(dirs).length > 0) {
        logger.info(
          { cgroups: dirs, sandbox_memory_bytes: config.limits.sandbox_memory_bytes },
          "each run gets cgroups of its own",
        );
      }
      sandbox = new Sandbox(config, resolved.layout, logger, cgroups);
    } catch (error) {
      rmSync(pidFile(config.stateDir), { force: true });
      throw error;
    }
    try {
      await sandbox.#probe();
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    return sandbox;
  }

  /** Run code to completion (or its limit) in the owner's workspace. */
  async exec(owner: Owner, request: CodeRequest, options: ExecOptions): Promise<RunOutcome> {
    this.#checkCode(request);
    const lease = this.#workspaces.acquire(owner);
    let run: Run | undefined;
    const cancel = () => run?.kill("cancelled");
    options.signal.addEventListener("abort", cancel, { once: true });
    try {
      let launched = this.#launch(lease.workspace, request, { tenantId: owner.tenantId }, options.onOutput);
      run = launched.run;
      if (options.signal.aborted) cancel();
      let outcome = await run.done;
      if (outcome.setupFailed && launched.warm) {
        // a sandbox made ahead can fail where a fresh one would not (its user was at the process
        // limit then); none of the code ran (runner.ts knows by STARTED_BYTE, which code cannot
        // withhold), so it runs once more, in a fresh one
        this.logger.warn({ stderr: outcome.stderr.slice(0, 500) }, "a warm sandbox failed; running afresh");
        launched = this.#launch(
          lease.workspace,
          request,
          { tenantId: owner.tenantId, warm: false },
          options.onOutput,
        );
        run = launched.run;
        if (options.signal.aborted) cancel();
        outcome = await run.done;
      }
      return this.#checkSetup(outcome);
    } finally {
      options.signal.removeEventListener("abort", cancel);
      lease.release();
    }
  }

  /** Start a job that outlives the call; its workspace stays in use until it ends. */
  start(owner: Owner, request: CodeRequest): JobStatus {
    this.#checkCode(request);
    this.#jobs.checkRoom(owner);
    const lease = this.#workspaces.acquire(owner);
    let run: Run;
    try {
      ({ run } = this.#launch(lease.workspace, request, { tenantId: owner.tenantId }));
    } catch (error) {
      lease.release();
      throw error;
    }
    const job = this.#jobs.add(owner, request.language, request.timeoutMs, run);
    void run.done.then((outcome) => {
      lease.release();
      this.#checkSetup(outcome, job);
      this.logger.info({ job_id: job.id, ...jobEnd(outcome) }, "job ended");
    });
    this.logger.info(
      { tenant_id: owner.tenantId, session_id: owner.sessionId, job_id: job.id },
      "job started",
    );
    return jobStatus(job);
  }

  /** A job's state and output so far; with `waitMs`, first wait up to that long for it to end. */
  async status(owner: Owner, jobId: string, waitMs: number, signal: AbortSignal): Promise<JobStatus> {
    const job = this.#jobs.get(owner, jobId);
    if (job.run.running && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        job.run.done,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
          onAbort = resolve;
          signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
    return jobStatus(job);
  }

  /** Kill a running job and its processes; a finished job is left as it ended. */
  async cancel(owner: Owner, jobId: string): Promise<JobStatus> {
    const job = this.#jobs.get(owner, jobId);
    job.run.kill("cancelled");
    await job.run.done;
    return jobStatus(job);
  }

  readFile(owner: Owner, path: string): { data: Buffer; size: number } {
    const parts = workspacePath(path);
    return this.#withWorkspace(owner, (workspace) =>
      readWorkspaceFile(workspace, parts, this.config.limits.max_read_bytes),
    );
  }

  writeFile(owner: Owner, path: string, data: Buffer): void {
    const limit = this.config.limits.max_write_bytes;
    if (data.length > limit) {
      throw new SandboxError(
        "too_large",
        `the content is ${data.length} bytes; sandbox_write_file takes at most ${limit}`,
      );
    }
    const parts = workspacePath(path);
    this.#withWorkspace(owner, (workspace) => writeWorkspaceFile(workspace, parts, data));
  }

  list(owner: Owner, path: string, recursive: boolean): { entries: ListEntry[]; truncated: boolean } {
    const parts = workspacePath(path);
    return this.#withWorkspace(owner, (workspace) =>
      listWorkspace(workspace, parts, { recursive, maxEntries: this.config.limits.max_list_entries }),
    );
  }

  /** How many sandboxes wait, set up, for their sessions' next calls. */
  get warmSandboxes(): number {
    return this.#warm.size;
  }

  sweep(now: number): void {
    this.#jobs.sweep(now);
    this.#warm.sweep(now);
    for (const dir of this.#workspaces.sweep(now)) this.#warm.drop(`${dir}\0`);
  }

  /** Kill every run and job; workspaces stay for the next start. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    for (const run of this.#runs.keys()) run.kill("cancelled");
    await Promise.all([...[...this.#runs.keys()].map((run) => run.done), this.#warm.close()]);
    await this.cgroups.close();
    rmSync(pidFile(this.config.stateDir), { force: true });
  }

  #withWorkspace<T>(owner: Owner, use: (workspace: WorkspaceDir) => T): T {
    const lease: Lease = this.#workspaces.acquire(owner);
    try {
      return use(lease.workspace);
    } finally {
      lease.release();
    }
  }

  #checkCode(request: CodeRequest): void {
    const { limits } = this.config;
    if (!this.layout.interpreters.has(request.language)) {
      const known = [...this.layout.interpreters.keys()].join(", ");
      throw new SandboxError("unknown_language", `this sandbox runs ${known}, not ${request.language}`);
    }
    const codeBytes = Buffer.byteLength(request.code);
    if (codeBytes > limits.max_code_bytes) {
      throw new SandboxError(
        "too_large",
        `the code is ${codeBytes} bytes; the most is ${limits.max_code_bytes}: write it to a file with sandbox_write_file and run that`,
      );
    }
    const stdinBytes = request.stdin === undefined ? 0 : Buffer.byteLength(request.stdin);
    if (stdinBytes > limits.max_stdin_bytes) {
      throw new SandboxError(
        "too_large",
        `stdin is ${stdinBytes} bytes; the most is ${limits.max_stdin_bytes}: write it to a file instead`,
      );
    }
  }

  get #runsDir(): string {
    return join(this.config.stateDir, "runs");
  }

  /**
   * Start `request` in a sandbox of the workspace: the one made ready for it if there is one
   * (`warm`), else a fresh one; then make the next one ready.
   */
  #launch(
    workspace: WorkspaceDir,
    request: CodeRequest,
    options: { tenantId: string; warm?: boolean },
    onOutput?: ExecOptions["onOutput"],
  ): { run: Run; warm: boolean } {
    const { limits } = this.config;
    if (this.#runs.size >= limits.max_concurrent_runs) {
      throw new SandboxError(
        "busy",
        `the sandbox runs ${this.#runs.size} programs already, its most; try again shortly`,
      );
    }
    let ofTenant = 0;
    for (const tenantId of this.#runs.values()) if (tenantId === options.tenantId) ofTenant++;
    if (ofTenant >= limits.max_runs_per_tenant) {
      throw new SandboxError(
        "busy",
        `this tenant runs ${ofTenant} programs in the sandbox already, the most one tenant may at once; ` +
          "try again when one has ended",
      );
    }
    const useWarm = options.warm ?? true;
    const key = `${workspace.dir}\0${workspace.uid}\0${request.language}`;
    const warm = useWarm ? this.#warm.take(key) : undefined;
    const { run, codeDir } = warm ?? this.#prepare(options.tenantId, workspace, request.language);
    // counted from here, whatever happens next, so close() waits for its end and its cleanup
    this.#runs.set(run, options.tenantId);
    void run.done.then(() => this.#runs.delete(run));
    try {
      writeFileSync(join(codeDir, "main"), request.code, { mode: 0o644 });
      run.start({ stdin: request.stdin, timeoutMs: request.timeoutMs, ...(onOutput && { onOutput }) });
    } catch (error) {
      // a sandbox left waiting for its code would wait forever, holding its cgroups and run
      // directory: killed, it ends and they are released as after any run
      run.kill("cancelled");
      this.logger.error({ err: error }, "a sandbox could not be given its code");
      throw new SandboxError("sandbox_failed", "the sandbox could not be set up; the service's log says why");
    }
    if (useWarm) {
      // while this run runs, so the next is set up by the time the session calls again; after
      // this run's start, which the spawn (a fork of the whole service) must not delay
      setImmediate(() => {
        try {
          this.#warm.offer(key, () => this.#prepare(options.tenantId, workspace, request.language));
        } catch (error) {
          this.logger.warn({ err: error }, "a sandbox could not be made ready ahead");
        }
      });
    }
    return { run, warm: warm !== undefined };
  }

  /** Spawn a sandbox for the workspace and language, set up and waiting for its code. */
  #prepare(tenantId: string, workspace: WorkspaceDir, language: Language): Prepared {
    const { limits } = this.config;
    const codeDir = mkdtempSync(join(this.#runsDir, "run-"));
    chmodSync(codeDir, 0o755);
    const seccomp = this.#seccomp;
    const command = launchCommand(this.config, this.layout, limits, {
      workspaceDir: workspace.dir,
      codeDir,
      language,
      seccomp: seccomp !== undefined,
    });
    let cgroup: RunCgroup | undefined;
    try {
      cgroup = this.cgroups.create(tenantId, limits.sandbox_memory_bytes);
    } catch (error) {
      rmSync(codeDir, { recursive: true, force: true });
      this.logger.error({ err: error }, "a run's cgroups could not be made");
      throw new SandboxError("sandbox_failed", "the sandbox could not be set up; the service's log says why");
    }
    const run = new Run({
      command,
      uid: workspace.uid,
      gid: workspace.gid,
      maxOutputBytes: limits.max_output_bytes,
      nice: limits.nice,
      ...(cgroup && { cgroup }),
      ...(seccomp && { seccomp }),
    });
    void run.done.then(() => rmSync(codeDir, { recursive: true, force: true }));
    return { run, codeDir };
  }

  /** A run whose sandbox never came up is the service's failure, not the code's: log bwrap's words, tell the caller little. */
  #checkSetup(outcome: RunOutcome, job?: Job): RunOutcome {
    if (!outcome.setupFailed) return outcome;
    this.logger.error(
      { stderr: outcome.stderr.slice(0, 2000), job_id: job?.id },
      "the sandbox could not be set up",
    );
    if (job) return outcome;
    throw new SandboxError("sandbox_failed", "the sandbox could not be set up; the service's log says why");
  }

  async #probe(): Promise<void> {
    const dir = join(this.config.stateDir, "probe");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { mode: 0o700 });
    const uid = this.config.uids.first;
    chownSync(dir, uid, uid);
    try {
      for (const language of this.layout.interpreters.keys()) {
        const { run } = this.#launch(
          { dir, uid, gid: uid },
          { language, code: PROBES[language], timeoutMs: PROBE_TIMEOUT_MS },
          { tenantId: "", warm: false },
        );
        const outcome = await run.done;
        // the probe's code is ours, so here stderr may judge: bwrap's own words (or no bwrap at
        // all) are the host's fault, anything else the interpreter's
        if (outcome.setupFailed && /^(bwrap: |cannot start the sandbox)/.test(outcome.stderr)) {
          throw new StartupError(probeAdvice(outcome.stderr));
        }
        if (outcome.exitCode !== 0 || outcome.stdout.trim() !== "ok") {
          throw new StartupError(
            `the ${language} interpreter (${this.config.languages.get(language)}) does not run in the sandbox: ` +
              `${outcome.end === "timed_out" ? "no answer in time" : `exit code ${outcome.exitCode}`}; ${outcome.stderr.trim().slice(0, 1000)}\n` +
              "It may need files outside the mounted system_paths: add them to system_paths.",
          );
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
