import { constants } from "node:os";
import type { JobStatus } from "./jobs.js";
import type { RunOutcome } from "./runner.js";

/** The structured content of sandbox_exec. */
export interface ExecResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  duration_ms: number;
  timed_out: boolean;
  out_of_memory: boolean;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));
const SIGNAL_MEANINGS: Record<string, string> = {
  SIGKILL: "killed",
  SIGXCPU: "CPU time limit reached",
  SIGXFSZ: "file size limit reached",
  SIGSEGV: "segmentation fault",
  SIGABRT: "aborted",
};

export function execResult(outcome: RunOutcome): ExecResult {
  return {
    exit_code: outcome.exitCode,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated: outcome.truncated,
    duration_ms: outcome.durationMs,
    timed_out: outcome.end === "timed_out",
    out_of_memory: outcome.outOfMemory,
  };
}

/** What describing a run's end needs to know. */
export interface EndFacts {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  timeoutMs: number;
  cpuSeconds: number;
  outOfMemory: boolean;
  sandboxMemoryBytes: number;
}

/** How a run ended, in words: "exit code 0", "exit code 153 (SIGXFSZ: file size limit reached)". Pure. */
export function describeEnd(facts: EndFacts): string {
  const end = describeExit(facts);
  if (!facts.outOfMemory) return end;
  // the kernel picks which process dies, not always the first: the code may have gone on after
  const mib = Math.round((facts.sandboxMemoryBytes / 1024 ** 2) * 10) / 10;
  return `${end}; out of memory: the kernel killed a process of it at the sandbox's memory limit of ${mib} MiB`;
}

function describeExit(facts: EndFacts): string {
  const { exitCode } = facts;
  if (facts.timedOut) {
    return `killed at the wall-clock limit of ${facts.timeoutMs / 1000} s (with every process it started)`;
  }
  if (exitCode === null) return "killed";
  const signal = exitCode > 128 ? SIGNAL_NAMES.get(exitCode - 128) : undefined;
  if (!signal) return `exit code ${exitCode}`;
  // the program is its namespace's pid 1, which the kernel spares SIGXCPU: it meets the CPU
  // limit as SIGKILL a second later, and only a run at least that long can have
  const cpuKill = signal === "SIGKILL" && facts.durationMs >= facts.cpuSeconds * 1000;
  const meaning = cpuKill ? `the CPU time limit of ${facts.cpuSeconds} s` : SIGNAL_MEANINGS[signal];
  return `exit code ${exitCode} (${signal}${meaning ? `: ${meaning}` : ""})`;
}

/** The readable text of a run's result: how it ended, then each stream that has output. Pure. */
export function runText(
  result: Pick<ExecResult, "exit_code" | "stdout" | "stderr" | "truncated" | "duration_ms">,
  end: string,
  maxOutputBytes: number,
): string {
  const lines = [`${end}, ${result.duration_ms} ms`];
  if (result.stdout) lines.push(`--- stdout ---\n${result.stdout}`);
  if (result.stderr) lines.push(`--- stderr ---\n${result.stderr}`);
  if (!result.stdout && !result.stderr) lines.push("(no output)");
  if (result.truncated) lines.push(`[output truncated: each stream keeps its first ${maxOutputBytes} bytes]`);
  return lines.join("\n");
}

export function jobText(
  status: JobStatus,
  limits: Pick<EndFacts, "timeoutMs" | "cpuSeconds" | "sandboxMemoryBytes">,
  maxOutputBytes: number,
): string {
  const end =
    status.state === "running"
      ? `job ${status.job_id} is running`
      : `job ${status.job_id} ${
          status.state === "cancelled"
            ? "was cancelled"
            : describeEnd({
                exitCode: status.exit_code,
                timedOut: status.state === "timed_out",
                durationMs: status.duration_ms,
                outOfMemory: status.out_of_memory,
                ...limits,
              })
        }`;
  return runText(status, end, maxOutputBytes);
}
