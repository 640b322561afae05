import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { ROOT } from "./cli.js";

export interface StartedProcess {
  child: ChildProcess;
  /** Every stdout and stderr line so far. */
  output: string[];
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * Spawn `node args…` (or `command args…`) and resolve once a stdout line satisfies `ready`, with
 * what it returned. Fails if the process exits first or nothing is ready in `timeoutMs`.
 */
export function startProcess<T>(
  args: string[],
  env: Record<string, string>,
  ready: (line: string) => T | undefined,
  timeoutMs = 10_000,
  command = process.execPath,
): Promise<StartedProcess & { ready: T }> {
  const child = spawn(command, args, {
    cwd: ROOT,
    // the run's own temporary directory (test/helpers/temp-dir-setup.ts), so what it leaves is seen
    env: { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const stop = (signal: NodeJS.Signals = "SIGTERM") =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once("exit", (code) => resolve(code));
      child.kill(signal);
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`not ready in ${timeoutMs} ms:\n${output.join("\n")}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${output.join("\n")}`));
    });
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      output.push(line);
      const value = ready(line);
      if (value !== undefined) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ child, output, stop, ready: value });
      }
    });
  });
}

/** An example tool service of examples/tools, on a free port: `ready` is its URL. */
function startExampleService(command: string, script: string, token: string) {
  return startProcess(
    [script],
    { BRAIN_TOOLS_KEY: token, PORT: "0" },
    (line) => line.match(/listening on (\S+)/)?.[1],
    10_000,
    command,
  );
}

/** examples/tools/server.mjs: echo, in Node.js. */
export const startEchoService = (token: string) =>
  startExampleService(process.execPath, "examples/tools/server.mjs", token);

/** examples/tools/server.py: echo and countdown, in Python; see pythonAvailable. */
export const startPythonService = (token: string) =>
  startExampleService("python3", "examples/tools/server.py", token);

/** A reader of log lines that finds the URL in the JSON line whose `msg` is `message`. */
const urlFromLog =
  (message: string) =>
  (line: string): string | undefined => {
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      return entry.msg === message ? entry.url : undefined;
    } catch {
      return undefined;
    }
  };

/** Brain's `listening` log line carries its URL. */
export const brainUrlFromLog = urlFromLog("brain listening");

/** A kit tool service's `listening` log line carries its URL. */
export const toolServiceUrlFromLog = urlFromLog("tool service listening");

/** Whether python3 runs here; when it does not, says once on stderr what is skipped and why. */
export function pythonAvailable(skipped: string): boolean {
  const found = spawnSync("python3", ["--version"]).status === 0;
  if (!found) process.stderr.write(`python3 not found: ${skipped} skipped (install python3 to run them)\n`);
  return found;
}

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
