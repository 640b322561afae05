import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs } from "../helpers/host-needs.js";
import { startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";
import { removedOnFailure } from "../helpers/temp-dir.js";
import { envelope } from "../kit/kit-service.js";
import {
  callTool,
  eventually,
  marker,
  processesWith,
  startTestSandbox,
  type TestSandbox,
  testConfig,
} from "./sandbox-service.js";

let sandbox: TestSandbox;
/** Runtimes a Debian host may keep in /usr/lib, none of which a sandbox should reach. */
const HOST_RUNTIMES = [
  "/usr/lib/jvm",
  "/usr/lib/erlang",
  "/usr/lib/postgresql",
  "/usr/lib/gcc",
  "/usr/lib/llvm-14",
];
const HOST_LIBC = realpathSync("/lib/x86_64-linux-gnu/libc.so.6");

beforeAll(async () => {
  sandbox = await startTestSandbox(130_000, { limits: { max_jobs_per_session: 2 } });
});

afterAll(async () => {
  await sandbox?.close();
});

interface JobStatus {
  job_id: string;
  state: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
}
const statusOf = (answer: { result: { structured_content?: Record<string, unknown> } }) =>
  answer.result.structured_content as unknown as JobStatus;

describe("sandbox_exec", needs("sandbox"), () => {
  it("streams stdout and stderr as progress while it runs, then the whole result", async () => {
    const answer = await sandbox.call("sandbox_exec", {
      language: "python",
      code: "import sys, time\nprint('one')\ntime.sleep(0.2)\nprint('two', file=sys.stderr)\ntime.sleep(0.2)\nprint('three')\nsys.exit(3)",
    });
    expect(answer.progress).toEqual([
      { stream: "stdout", text: "one\n" },
      { stream: "stderr", text: "two\n" },
      { stream: "stdout", text: "three\n" },
    ]);
    expect(answer.result.is_error).toBeUndefined();
    expect(answer.result.structured_content).toMatchObject({
      exit_code: 3,
      stdout: "one\nthree\n",
      stderr: "two\n",
      truncated: false,
      timed_out: false,
    });
    expect(answer.text).toMatch(/^exit code 3, \d+ ms\n--- stdout ---\none\nthree\n\n--- stderr ---\ntwo\n$/);
  });

  it("sends a line of output as progress when it is written, not when the run ends", async () => {
    const response = await request(`${sandbox.url}/tools/sandbox_exec`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${sandbox.token}` },
      body: JSON.stringify(
        envelope({ language: "bash", code: "echo first; sleep 1; echo second" }, { session_id: "ses_live" }),
      ),
    });
    const started = performance.now();
    const seen: { at: number; text: string }[] = [];
    for await (const chunk of response.body)
      seen.push({ at: performance.now() - started, text: String(chunk) });
    const firstProgress = seen.find((chunk) => chunk.text.includes('"text":"first\\n"'));
    const result = seen.find((chunk) => chunk.text.includes("event: result"));
    expect(firstProgress).toBeDefined();
    expect(result).toBeDefined();
    // the second line is a second away: a stream sent at the end would bring both together
    expect((result?.at ?? 0) - (firstProgress?.at ?? 0)).toBeGreaterThan(700);
  });

  it("keeps every progress event within max_progress_bytes, escapes included", async () => {
    const small = await startTestSandbox(130_400, { limits: { max_progress_bytes: 1024 } });
    try {
      const answer = await small.call("sandbox_exec", {
        language: "python",
        code: "import sys\nsys.stdout.write('\\x01' * 5000)",
      });
      expect(answer.progress.length).toBeGreaterThanOrEqual(5);
      for (const progress of answer.progress) {
        expect(JSON.stringify(progress).length).toBeLessThanOrEqual(1024);
        const { text } = progress as { text: string };
        expect(text).toBe("\x01".repeat(text.length));
      }
      // progress is best effort (the kit drops it while a reader lags); the result has it all
      expect(answer.result.structured_content).toMatchObject({ stdout: "\x01".repeat(5000) });
    } finally {
      await small.close();
    }
  });

  it("runs node and bash, and gives stdin to the program", async () => {
    const node = await sandbox.call("sandbox_exec", { language: "node", code: "console.log(6 * 7)" });
    expect(node.result.structured_content).toMatchObject({ exit_code: 0, stdout: "42\n" });
    const bash = await sandbox.call("sandbox_exec", {
      language: "bash",
      code: "tr a-z A-Z",
      stdin: "shout\n",
    });
    expect(bash.result.structured_content).toMatchObject({ exit_code: 0, stdout: "SHOUT\n" });
  });

  it("refuses a language the config does not name, and arguments out of bounds", async () => {
    const only = await startTestSandbox(130_100, { languages: { bash: "/usr/bin/bash" } });
    try {
      const python = await only.call("sandbox_exec", { language: "python", code: "print(1)" });
      expect(python.result.is_error).toBe(true);
      expect(python.text).toMatch(/language/);
      // nor can bash reach an interpreter the config leaves out
      const reach = await only.call("sandbox_exec", {
        language: "bash",
        code: "python3 -c 1; node -e 1; perl -e 1; ls /usr/bin",
      });
      const out = reach.result.structured_content as { stdout: string; stderr: string };
      expect(out.stderr.match(/command not found/g)).toHaveLength(3);
      expect(out.stdout).not.toMatch(/python|node|perl/);
      // nor the runtimes that live in the host's /usr/lib: only the libraries bash and its
      // programs link against are there, and nothing in it but libraries can be executed
      const runtimes = HOST_RUNTIMES.filter((path) => existsSync(path));
      const libs = await only.call("sandbox_exec", {
        language: "bash",
        code: `for p in ${runtimes.join(" ")}; do test -e $p && echo "reachable: $p"; done; find /usr/lib /usr/lib64 -type f -perm -u+x ! -name '*.so*'; ls /usr/lib`,
      });
      const seen = libs.result.structured_content as { stdout: string; exit_code: number };
      expect(seen.stdout.trim().split("\n").sort()).toEqual(["locale", basename(dirname(HOST_LIBC))]);
    } finally {
      await only.close();
    }
    const slow = await sandbox.call("sandbox_exec", { language: "bash", code: "true", timeout_seconds: 21 });
    expect(slow.result.is_error).toBe(true);
    expect(slow.text).toMatch(/timeout_seconds/);
  });

  it("kills the process tree when the caller disconnects", async () => {
    const tag = marker();
    const controller = new AbortController();
    const call = sandbox
      .call(
        "sandbox_exec",
        { language: "bash", code: `sleep 600.${tag} & sleep 601.${tag}` },
        { signal: controller.signal },
      )
      .catch((error: unknown) => error);
    await eventually(() => processesWith(tag).length > 0, 5000, "the sandbox is running");
    controller.abort();
    await call;
    await eventually(() => processesWith(tag).length === 0, 3000, "every process of the call is gone");
    await eventually(() => sandbox.logs().includes("the caller went away before the result"));
  });

  it("answers busy past max_concurrent_runs instead of queueing", async () => {
    const narrow = await startTestSandbox(130_200, { limits: { max_concurrent_runs: 1 } });
    try {
      const first = narrow.call("sandbox_exec", { language: "bash", code: "sleep 1" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await narrow.call("sandbox_exec", { language: "bash", code: "true" });
      expect(second.result.structured_content).toMatchObject({ error: { code: "busy" } });
      expect((await first).result.structured_content).toMatchObject({ exit_code: 0 });
    } finally {
      await narrow.close();
    }
  });

  it("leaves runs for other tenants when one tenant is at max_runs_per_tenant", async () => {
    const shared = await startTestSandbox(130_500, {
      limits: { max_concurrent_runs: 3, max_runs_per_tenant: 2 },
    });
    try {
      const sleep = (session: string, tenant = "greedy") =>
        shared.call("sandbox_exec", { language: "bash", code: "sleep 1" }, { tenant, session });
      const held = [sleep("ses_a"), sleep("ses_b")];
      await new Promise((resolve) => setTimeout(resolve, 300));
      // the same tenant from another session is refused; another tenant still gets the last run
      const third = await shared.call(
        "sandbox_exec",
        { language: "bash", code: "true" },
        { tenant: "greedy", session: "ses_c" },
      );
      expect(third.result.structured_content).toMatchObject({ error: { code: "busy" } });
      expect(third.text).toContain("the most one tenant may at once");
      const other = await shared.call(
        "sandbox_exec",
        { language: "bash", code: "echo mine" },
        { tenant: "modest", session: "ses_d" },
      );
      expect(other.result.structured_content).toMatchObject({ exit_code: 0, stdout: "mine\n" });
      for (const answer of await Promise.all(held)) {
        expect(answer.result.structured_content).toMatchObject({ exit_code: 0 });
      }
    } finally {
      await shared.close();
    }
  });
});

describe("jobs", needs("sandbox"), () => {
  it("outlive the call that started them, report output so far, and stop at sandbox_cancel", async () => {
    const tag = marker();
    const started = await sandbox.call("sandbox_start", {
      language: "bash",
      code: `echo started; sleep 600.${tag}`,
    });
    const job = statusOf(started);
    expect(job.state).toBe("running");
    expect(job.job_id).toMatch(/^job_[0-9a-f]{32}$/);
    expect(started.text).toContain(`job ${job.job_id} is running`);
    await eventually(() => processesWith(tag).length > 0, 5000, "the job is running");

    const running = await sandbox.call("sandbox_status", { job_id: job.job_id, wait_seconds: 0.3 });
    expect(statusOf(running)).toMatchObject({ state: "running", stdout: "started\n", exit_code: null });
    expect(processesWith(tag).length).toBeGreaterThan(0);

    const cancelled = await sandbox.call("sandbox_cancel", { job_id: job.job_id });
    expect(statusOf(cancelled)).toMatchObject({ state: "cancelled", exit_code: null, stdout: "started\n" });
    expect(processesWith(tag)).toEqual([]);
    const after = await sandbox.call("sandbox_status", { job_id: job.job_id });
    expect(statusOf(after).state).toBe("cancelled");
  });

  it("leave nothing behind when cancelled while the sandbox is still being set up", async () => {
    const tag = marker();
    for (let i = 0; i < 5; i++) {
      const started = await sandbox.call("sandbox_start", {
        language: "bash",
        code: `sleep 600.${tag} & sleep 601.${tag}`,
      });
      const cancelled = await sandbox.call("sandbox_cancel", { job_id: statusOf(started).job_id });
      expect(statusOf(cancelled).state).toBe("cancelled");
    }
    await eventually(() => processesWith(tag).length === 0, 3000, "no process of a cancelled job is left");
  });

  it("end on their own with an exit code; sandbox_status can wait for it", async () => {
    const started = await sandbox.call("sandbox_start", {
      language: "python",
      code: "import time\ntime.sleep(0.5)\nprint('done')",
    });
    const waited = await sandbox.call("sandbox_status", {
      job_id: statusOf(started).job_id,
      wait_seconds: 10,
    });
    expect(statusOf(waited)).toMatchObject({ state: "exited", exit_code: 0, stdout: "done\n" });
    expect(waited.text).toMatch(/exit code 0/);
  });

  it("stop at their own wall-clock limit", async () => {
    const started = await sandbox.call("sandbox_start", {
      language: "bash",
      code: "sleep 10",
      timeout_seconds: 0.5,
    });
    const waited = await sandbox.call("sandbox_status", {
      job_id: statusOf(started).job_id,
      wait_seconds: 5,
    });
    expect(statusOf(waited)).toMatchObject({ state: "timed_out", exit_code: null });
  });

  it("belong to their session: another session or tenant cannot see or cancel them", async () => {
    const started = await sandbox.call(
      "sandbox_start",
      { language: "bash", code: "sleep 5" },
      { session: "ses_owner" },
    );
    const id = statusOf(started).job_id;
    for (const other of [{ session: "ses_other" }, { tenant: "globex", session: "ses_owner" }]) {
      for (const tool of ["sandbox_status", "sandbox_cancel"]) {
        const answer = await sandbox.call(tool, { job_id: id }, other);
        expect(answer.result.structured_content).toMatchObject({ error: { code: "not_found" } });
      }
    }
    const still = await sandbox.call("sandbox_status", { job_id: id }, { session: "ses_owner" });
    expect(statusOf(still).state).toBe("running");
    await sandbox.call("sandbox_cancel", { job_id: id }, { session: "ses_owner" });
  });

  it("are limited per session", async () => {
    const owner = { session: "ses_many" };
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      ids.push(
        statusOf(await sandbox.call("sandbox_start", { language: "bash", code: "sleep 5" }, owner)).job_id,
      );
    }
    const third = await sandbox.call("sandbox_start", { language: "bash", code: "sleep 5" }, owner);
    expect(third.result.structured_content).toMatchObject({ error: { code: "busy" } });
    for (const id of ids) await sandbox.call("sandbox_cancel", { job_id: id }, owner);
  });
});

describe("the service process", needs("sandbox"), () => {
  it("takes its sandboxes with it when it dies", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "sandbox-proc-"));
    chmodSync(stateDir, 0o711);
    const configPath = join(stateDir, "sandbox.json");
    writeFileSync(configPath, JSON.stringify(testConfig(join(stateDir, "state"), 130_300)));
    const token = "proc-token-0123456789";
    const service = await removedOnFailure(
      stateDir,
      startProcess(
        ["dist/services/sandbox/main.js", "-config", configPath],
        { SANDBOX_TEST_TOKEN: token },
        toolServiceUrlFromLog,
      ),
    );
    try {
      const tag = marker();
      const started = await callTool(service.ready, token, "sandbox_start", {
        language: "bash",
        code: `sleep 600.${tag}`,
      });
      expect(statusOf(started).state).toBe("running");
      await eventually(() => processesWith(tag).length > 0, 5000, "the job is running");
      await service.stop("SIGKILL");
      await eventually(() => processesWith(tag).length === 0, 3000, "the job died with the service");
      expect(service.output.join("\n")).not.toContain(token);
    } finally {
      await service.stop("SIGKILL");
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
