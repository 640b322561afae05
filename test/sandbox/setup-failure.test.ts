import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PATHS } from "../../services/sandbox/config.js";
import { needs } from "../helpers/host-needs.js";
import { mountTmpfs } from "./host-mount.js";
import { eventually, processesOf, startTestSandbox, type TestSandbox } from "./sandbox-service.js";

// A sandbox that bwrap could not set up is the service's failure (`sandbox_failed`, a job
// `failed`) and the only run ever retried; a program's own failure is its result, whatever it prints.
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(170_000);
});

afterAll(async () => {
  await sandbox?.close();
});

interface Structured {
  result: { is_error?: boolean; structured_content?: Record<string, unknown> };
}
const contentOf = (answer: Structured) => answer.result.structured_content as Record<string, unknown>;

/** Code that appends a line to count.txt, then fails exactly as bwrap does when it cannot set a sandbox up. */
const FORGERS = {
  bash: "echo run >> count.txt; echo 'bwrap: oops' >&2; exit 1",
  python: [
    "import sys",
    "open('count.txt', 'a').write('run\\n')",
    "sys.stderr.write('bwrap: oops\\n')",
    "sys.exit(1)",
  ].join("\n"),
  node: [
    "require('fs').appendFileSync('count.txt', 'run\\n')",
    "process.stderr.write('bwrap: oops\\n', () => process.exit(1))",
  ].join("\n"),
} as const;

async function countRuns(session: string): Promise<number> {
  const answer = await sandbox.call("sandbox_read_file", { path: "count.txt" }, { session });
  return String(contentOf(answer).content).split("\n").filter(Boolean).length;
}

describe("a program that prints what bwrap prints when it fails", needs("sandbox"), () => {
  it.each(Object.entries(FORGERS))(
    "(%s) is reported as itself and runs once, in a fresh sandbox and in one made ready",
    async (language, code) => {
      const session = `ses_forge_${language}`;
      const waiting = sandbox.running.sandbox.warmSandboxes;
      const first = await sandbox.call("sandbox_exec", { language, code }, { session });
      expect(first.result.is_error).toBeUndefined();
      expect(contentOf(first)).toMatchObject({ exit_code: 1, stdout: "", stderr: "bwrap: oops\n" });
      expect(await countRuns(session)).toBe(1);

      await eventually(
        () => sandbox.running.sandbox.warmSandboxes === waiting + 1,
        3000,
        "a sandbox waits for the session's next call",
      );
      const warm = await sandbox.call("sandbox_exec", { language, code }, { session });
      expect(warm.result.is_error).toBeUndefined();
      expect(contentOf(warm)).toMatchObject({ exit_code: 1, stdout: "", stderr: "bwrap: oops\n" });
      expect(await countRuns(session)).toBe(2);
    },
  );

  it("is reported as itself even when it closes its stdout before anything else", async () => {
    const answer = await sandbox.call("sandbox_exec", {
      language: "bash",
      code: "exec >&-; echo 'bwrap: oops' >&2; exit 1",
    });
    expect(answer.result.is_error).toBeUndefined();
    expect(contentOf(answer)).toMatchObject({ exit_code: 1, stdout: "", stderr: "bwrap: oops\n" });
  });

  it("ends a job as exited, with its exit code and stderr", async () => {
    const session = "ses_forge_job";
    const started = await sandbox.call(
      "sandbox_start",
      { language: "bash", code: FORGERS.bash },
      { session },
    );
    const jobId = contentOf(started).job_id;
    const ended = await sandbox.call("sandbox_status", { job_id: jobId, wait_seconds: 10 }, { session });
    expect(contentOf(ended)).toMatchObject({
      state: "exited",
      exit_code: 1,
      stdout: "",
      stderr: "bwrap: oops\n",
    });
    expect(await countRuns(session)).toBe(1);
  });

  it.each([
    ["bash", "printf '\\006ok'"],
    ["python", "import sys\nsys.stdout.buffer.write(b'\\x06ok')"],
    ["node", "process.stdout.write('\\x06ok')"],
  ])("(%s) gets its stdout back whole, from its first byte", async (language, code) => {
    const answer = await sandbox.call("sandbox_exec", { language, code });
    expect(contentOf(answer)).toMatchObject({ exit_code: 0, stdout: "\x06ok" });
  });
});

describe("a sandbox bwrap cannot set up", needs("sandbox"), () => {
  it("answers sandbox_failed and fails a job, logging bwrap's words for the operator", async () => {
    // a mounted host directory that goes away after the start check: every sandbox made from
    // then on fails in bwrap, before any code runs
    const gone = mkdtempSync("/var/tmp/sandbox-gone-");
    chmodSync(gone, 0o755);
    const broken = await startTestSandbox(170_100, { system_paths: [...DEFAULT_SYSTEM_PATHS, gone] });
    try {
      rmSync(gone, { recursive: true, force: true });
      const answer = await broken.call("sandbox_exec", { language: "bash", code: "echo hi > ran" });
      expect(answer.result.is_error).toBe(true);
      expect(contentOf(answer)).toMatchObject({ error: { code: "sandbox_failed" } });
      await expect.poll(() => broken.logs()).toContain(`Can't find source path ${gone}`);

      const started = await broken.call("sandbox_start", { language: "bash", code: "echo hi > ran" });
      const jobId = contentOf(started).job_id;
      const ended = await broken.call("sandbox_status", { job_id: jobId, wait_seconds: 10 });
      expect(contentOf(ended)).toMatchObject({ state: "failed", exit_code: 1, stdout: "", stderr: "" });

      const listed = await broken.call("sandbox_list", { path: "." });
      expect(contentOf(listed).entries).toEqual([]);
    } finally {
      await broken.close();
      rmSync(gone, { recursive: true, force: true });
    }
  });
});

describe("a sandbox its code cannot be written for", needs("sandbox"), () => {
  it("is killed with its run directory, the call answers sandbox_failed, and the service goes on", async (ctx) => {
    const full = await startTestSandbox(170_200);
    try {
      const runs = join(full.stateDir, "runs");
      // a disk too small for the code: the sandbox is spawned, waiting, when its code fails to fit
      const unmount = mountTmpfs(ctx, runs, "size=4k,mode=711");
      try {
        const answer = await full.call("sandbox_exec", {
          language: "bash",
          code: `# ${"x".repeat(20_000)}\necho ran > ran.txt`,
        });
        expect(contentOf(answer)).toMatchObject({ error: { code: "sandbox_failed" } });
        await expect.poll(() => full.logs()).toContain("a sandbox could not be given its code");
        await eventually(
          () => processesOf(170_200).length === 0 && readdirSync(runs).length === 0,
          5000,
          "the sandbox and its run directory are gone",
        );
      } finally {
        unmount();
      }
      const again = await full.call("sandbox_exec", { language: "bash", code: "ls; echo ok" });
      expect(contentOf(again)).toMatchObject({ exit_code: 0, stdout: "ok\n" });
    } finally {
      await full.close();
    }
  });
});

describe("files in the workspace", needs("sandbox"), () => {
  it("never run before the call's code: not ~/.bashrc, not Python's user site-packages", async () => {
    const session = "ses_startup_files";
    // each would append to count.txt and fail as bwrap does, before the call's code could start
    const forge = "bwrap: oops";
    const planted = await sandbox.call(
      "sandbox_exec",
      {
        language: "bash",
        code: [
          `echo "echo bashrc >> count.txt; echo '${forge}' >&2; exit 1" > .bashrc`,
          `site=$(python3 -c 'import site; print(site.getusersitepackages())')`,
          'mkdir -p "$site"',
          `echo "import os, sys; open('count.txt', 'a').write('site\\n'); sys.stderr.write('${forge}\\n'); os._exit(1)" > "$site/usercustomize.py"`,
        ].join("\n"),
      },
      { session },
    );
    expect(contentOf(planted)).toMatchObject({ exit_code: 0, stderr: "" });
    for (const [language, code] of [
      ["bash", "echo code"],
      ["python", "print('code')"],
    ]) {
      const answer = await sandbox.call("sandbox_exec", { language, code }, { session });
      expect(contentOf(answer)).toMatchObject({ exit_code: 0, stdout: "code\n", stderr: "" });
    }
    const count = await sandbox.call("sandbox_read_file", { path: "count.txt" }, { session });
    expect(contentOf(count)).toMatchObject({ error: { code: "not_found" } });
  });
});
