import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceName } from "../../services/sandbox/workspaces.js";
import { needs } from "../helpers/host-needs.js";
import { eventually, processesOf, startTestSandbox, type TestSandbox } from "./sandbox-service.js";

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(160_000);
});

afterAll(async () => {
  await sandbox?.close();
});

const stdoutOf = (answer: { result: { structured_content?: Record<string, unknown> } }) =>
  (answer.result.structured_content as { stdout: string }).stdout;
const uidOf = (stateDir: string, session: string) =>
  statSync(join(stateDir, "workspaces", workspaceName({ tenantId: "acme", sessionId: session }))).uid;

describe("sandboxes made ready for a session's next call", needs("sandbox"), () => {
  it("are made after a call, and each call still gets a sandbox of its own", async () => {
    const session = { session: "ses_warm" };
    const first = await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "echo first > /tmp/left; echo $$ > pid; ls /tmp" },
      session,
    );
    expect(stdoutOf(first)).toBe("left\n");
    await eventually(
      () => sandbox.running.sandbox.warmSandboxes === 1,
      3000,
      "a sandbox waits for the next call",
    );
    const second = await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "ls -A /tmp; cat pid" },
      session,
    );
    // the /tmp of the first call is gone with its sandbox; the workspace stays (the program is pid 1)
    expect(stdoutOf(second)).toBe("1\n");
    const python = await sandbox.call("sandbox_exec", { language: "python", code: "print(6 * 7)" }, session);
    expect(stdoutOf(python)).toBe("42\n");
  });

  it("are never handed to another session", async () => {
    await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "echo a > only-a" },
      { session: "ses_warm_a" },
    );
    await eventually(() => sandbox.running.sandbox.warmSandboxes >= 1, 3000, "a sandbox waits");
    const other = await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "ls -A" },
      { session: "ses_warm_b" },
    );
    expect(stdoutOf(other)).toBe("");
  });

  it("are dropped when they die waiting, and the next call gets a fresh one", async () => {
    const session = { session: "ses_warm_dead" };
    await sandbox.call("sandbox_exec", { language: "bash", code: "true" }, session);
    const uid = uidOf(sandbox.stateDir, "ses_warm_dead");
    await eventually(() => processesOf(uid).length >= 2, 3000, "the waiting sandbox is up");
    const waiting = sandbox.running.sandbox.warmSandboxes;
    for (const pid of processesOf(uid)) process.kill(pid, "SIGKILL");
    await eventually(
      () => sandbox.running.sandbox.warmSandboxes === waiting - 1,
      3000,
      "the dead one is dropped",
    );
    const answer = await sandbox.call("sandbox_exec", { language: "bash", code: "echo fine" }, session);
    expect(stdoutOf(answer)).toBe("fine\n");
  });

  it("go with their workspace when it expires, and are not made with warm_sandboxes 0", async () => {
    const short = await startTestSandbox(160_100, { limits: { workspace_idle_seconds: 0.5 } });
    const none = await startTestSandbox(160_200, { limits: { warm_sandboxes: 0 } });
    try {
      await short.call("sandbox_exec", { language: "bash", code: "true" });
      const uid = uidOf(short.stateDir, "ses_one");
      await eventually(() => processesOf(uid).length >= 2, 3000, "the waiting sandbox is up");
      await eventually(
        () => processesOf(uid).length === 0,
        4000,
        "the waiting sandbox died with its workspace",
      );
      expect(short.running.sandbox.warmSandboxes).toBe(0);

      await none.call("sandbox_exec", { language: "bash", code: "true" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(none.running.sandbox.warmSandboxes).toBe(0);
      expect(processesOf(uidOf(none.stateDir, "ses_one"))).toEqual([]);
    } finally {
      await short.close();
      await none.close();
    }
  });
});
