import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

/** Run a fixture script on the build; its last stdout line, or a failure if it does not end in time. */
function runFixture(script: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} did not end within ${timeoutMs} ms (its event loop is stuck?)`));
    }, timeoutMs);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(output.trim().split("\n").at(-1) ?? "");
    });
  });
}

describe("closing a session whose turn has no owner", () => {
  // in a child process: a close that spins would otherwise stop this test's own event loop
  it("ends the ownerless turn and closes, instead of retrying forever", async () => {
    const outcome = JSON.parse(await runFixture("test/fixtures/stranded-close.mjs", 15_000));
    expect(outcome.before).toBe("running");
    expect(outcome.status).toBe(200);
    expect(outcome.events.map(([type]: [string]) => type)).toEqual([
      "session.created",
      "message.user",
      "turn.started",
      "turn.failed",
      "session.closed",
    ]);
    expect(outcome.events.at(-2)[1]).toEqual({
      error: { code: "brain_restarted", message: "Brain stopped during the turn" },
    });
  });
});
