import { randomBytes } from "node:crypto";
import type { Language } from "./config.js";
import { SandboxError } from "./errors.js";
import type { Run } from "./runner.js";
import type { Owner } from "./workspaces.js";

export type JobState = "running" | "exited" | "timed_out" | "cancelled" | "failed";

export interface Job {
  id: string;
  owner: Owner;
  language: Language;
  startedAt: Date;
  timeoutMs: number;
  run: Run;
}

export interface JobStatus {
  job_id: string;
  state: JobState;
  language: Language;
  started_at: string;
  timeout_seconds: number;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  duration_ms: number;
  /** Once it has ended: the kernel killed one of its processes at the sandbox's memory limit. */
  out_of_memory: boolean;
}

/** Long runs that outlive the call that started them, each visible only to its own tenant and session. */
export class Jobs {
  readonly #jobs = new Map<string, Job>();

  constructor(
    private readonly maxRunningPerSession: number,
    private readonly retentionMs: number,
  ) {}

  /** Check there is room for one more running job of `owner`; throws `busy` when there is not. */
  checkRoom(owner: Owner): void {
    const running = [...this.#jobs.values()].filter((job) => sameOwner(job.owner, owner) && job.run.running);
    if (running.length >= this.maxRunningPerSession) {
      throw new SandboxError(
        "busy",
        `this session already runs ${running.length} jobs, the most it may; wait for one or cancel it with sandbox_cancel`,
      );
    }
  }

  add(owner: Owner, language: Language, timeoutMs: number, run: Run): Job {
    const job: Job = {
      id: `job_${randomBytes(16).toString("hex")}`,
      owner,
      language,
      startedAt: new Date(),
      timeoutMs,
      run,
    };
    this.#jobs.set(job.id, job);
    return job;
  }

  /** The owner's job; another session's job is "not found", exactly like one that never existed. */
  get(owner: Owner, id: string): Job {
    const job = this.#jobs.get(id);
    if (!job || !sameOwner(job.owner, owner)) {
      throw new SandboxError(
        "not_found",
        `no job ${JSON.stringify(id)} in this session (finished jobs are kept for a while, then forgotten)`,
      );
    }
    return job;
  }

  /** Forget finished jobs older than the retention time. */
  sweep(now: number): void {
    for (const [id, job] of this.#jobs) {
      const { endedAt } = job.run;
      if (endedAt !== undefined && now - endedAt >= this.retentionMs) this.#jobs.delete(id);
    }
  }
}

export function jobStatus(job: Job): JobStatus {
  const { outcome } = job.run;
  const output = outcome ?? job.run.snapshot();
  let state: JobState = "running";
  if (outcome) state = outcome.setupFailed ? "failed" : outcome.end;
  return {
    job_id: job.id,
    state,
    language: job.language,
    started_at: job.startedAt.toISOString(),
    timeout_seconds: job.timeoutMs / 1000,
    exit_code: outcome?.exitCode ?? null,
    stdout: output.stdout,
    stderr: outcome?.setupFailed ? "" : output.stderr,
    truncated: output.truncated,
    duration_ms: output.durationMs,
    out_of_memory: outcome?.outOfMemory ?? false,
  };
}

function sameOwner(a: Owner, b: Owner): boolean {
  return a.tenantId === b.tenantId && a.sessionId === b.sessionId;
}
