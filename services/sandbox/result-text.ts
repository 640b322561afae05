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
  };
}

/** How a run ended, in words: "exit code 0", "exit code 152 (SIGXCPU: CPU time limit reached)". Pure. */
export function describeEnd(exitCode: number | null, timedOut: boolean, timeoutMs: number): string {
  if (timedOut)
    return `killed at the wall-clock limit of ${timeoutMs / 1000} s (with every process it started)`;
  if (exitCode === null) return "killed";
  const signal = exitCode > 128 ? SIGNAL_NAMES.get(exitCode - 128) : undefined;
  if (!signal) return `exit code ${exitCode}`;
  const meaning = SIGNAL_MEANINGS[signal];
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

export function jobText(status: JobStatus, timeoutMs: number, maxOutputBytes: number): string {
  const end =
    status.state === "running"
      ? `job ${status.job_id} is running`
      : `job ${status.job_id} ${status.state === "cancelled" ? "was cancelled" : describeEnd(status.exit_code, status.state === "timed_out", timeoutMs)}`;
  return runText(status, end, maxOutputBytes);
}
