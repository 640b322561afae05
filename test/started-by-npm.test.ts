import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BRAIN_BIN } from "./helpers/cli.js";
import { npxEnv, processesMarked } from "./helpers/npm.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "./helpers/processes.js";

const dir = mkdtempSync(join(tmpdir(), "brain-npm-"));
const MARK = randomBytes(8).toString("hex");
const env = { BRAIN_API_KEY: randomBytes(24).toString("hex"), STARTED_BY_NPM_TEST: MARK };

afterAll(() => {
  // what a failed test left running: it was started here, and carries this run's mark
  for (const pid of processesMarked("STARTED_BY_NPM_TEST", MARK)) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A host config on a free port and a store of its own. */
function brainConfig(name: string): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      listen: "127.0.0.1:0",
      store: { kind: "sqlite", path: join(dir, `${name}.db`) },
      tenants: [{ id: "local", api_key_env: "BRAIN_API_KEY" }],
      models: [{ name: "default", provider: "scripted" }],
    }),
  );
  return path;
}

/**
 * Resolves when every process holding the started process's stdout has exited; fails when one is
 * still there 10 s later (Brain takes well under a second to stop).
 */
function stdoutClosed(started: StartedProcess): Promise<unknown> {
  const stdout = started.child.stdout as NodeJS.ReadableStream;
  return Promise.race([
    once(stdout, "close"),
    new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error("Brain is still running 10 s after its parent died")),
        10_000,
      ).unref(),
    ),
  ]);
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("a Brain that npm started stops with npm", { timeout: 60_000 }, () => {
  it("`npx brain -config FILE &` then `kill` of that pid (the README's `kill %1`) frees the port", async () => {
    const npx = await startProcess(
      ["brain", "-config", brainConfig("npx")],
      { ...npxEnv(join(dir, "npm-cache")), ...env },
      brainUrlFromLog,
      30_000,
      "npx",
    );
    const closed = stdoutClosed(npx);
    process.kill(npx.child.pid as number, "SIGTERM");
    await closed;
    expect(await answers(npx.ready)).toBe(false);
    expect(npx.output.join("\n")).toContain('"msg":"stopping"');
  });

  it("stops when the shell npm ran it in dies of a signal, and one not started by npm does not", async () => {
    // `sh -c` as npm runs a command, which keeps the shell as Brain's parent and passes no signal on
    const underShell = (name: string, extraEnv: Record<string, string>) =>
      startProcess(
        ["-c", `"${process.execPath}" "${BRAIN_BIN}" -config "${brainConfig(name)}" & echo "pid $!"; wait`],
        { ...env, ...extraEnv },
        brainUrlFromLog,
        10_000,
        "sh",
      );
    const byNpm = await underShell("by-npm", { npm_lifecycle_event: "npx" });
    const byHand = await underShell("by-hand", {});
    const brainPid = (started: StartedProcess) => Number(/^pid (\d+)$/m.exec(started.output.join("\n"))?.[1]);
    const closed = stdoutClosed(byNpm);
    await Promise.all([byNpm.stop(), byHand.stop()]);
    await closed;
    expect(await answers(byNpm.ready)).toBe(false);
    // the same time has passed for the other one: it still serves, as `nohup` users expect
    expect(alive(brainPid(byHand))).toBe(true);
    expect(await answers(byHand.ready)).toBe(true);
    const handClosed = stdoutClosed(byHand);
    process.kill(brainPid(byHand), "SIGTERM");
    await handClosed;
  });
});
