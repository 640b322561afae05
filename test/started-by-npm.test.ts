import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRAIN_BIN, ROOT } from "./helpers/cli.js";
import { npxEnv, processesMarked } from "./helpers/npm.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "./helpers/processes.js";

let dir = "";
const MARK = randomBytes(8).toString("hex");
const env = { BRAIN_API_KEY: randomBytes(24).toString("hex"), STARTED_BY_NPM_TEST: MARK };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "brain-npm-"));
});

afterAll(() => {
  // what a failed test left running: it was started here, and carries this run's mark
  for (const pid of processesMarked("STARTED_BY_NPM_TEST", MARK)) process.kill(pid, "SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
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

  it.skipIf(!existsSync("/proc/self/stat"))(
    "stops at once when npm was gone before it began to wait (it died while Brain was starting)",
    async () => {
      // a server that reaches stopSignal only when told to (SIGUSR2), long after its parent died
      const server = `
      const { stopSignal } = await import(${JSON.stringify(join(ROOT, "dist/runtime/process.js"))});
      const alive = setInterval(() => {}, 1000);
      process.once("SIGUSR2", async () => {
        await stopSignal();
        console.log("stopped");
        clearInterval(alive);
      });
      console.log("started");`;
      const started = await startProcess(
        ["-c", `"${process.execPath}" --input-type=module -e '${server}' & echo "pid $!"; wait`],
        { ...env, npm_lifecycle_event: "npx" },
        (line) => (line === "started" ? line : undefined),
        10_000,
        "sh",
      );
      const pid = Number(/^pid (\d+)$/m.exec(started.output.join("\n"))?.[1]);
      const closed = stdoutClosed(started);
      await started.stop();
      // the kernel has given the orphan a new parent before it is told to wait
      const parentOf = () => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      await expect.poll(parentOf).not.toBe(started.child.pid);
      process.kill(pid, "SIGUSR2");
      await closed;
      expect(started.output).toContain("stopped");
    },
  );
});
