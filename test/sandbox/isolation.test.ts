import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs } from "../helpers/host-needs.js";
import { eventually, marker, processesWith, startTestSandbox, type TestSandbox } from "./sandbox-service.js";

// Each attack below must fail inside the sandbox, and the service must answer the next call.
let sandbox: TestSandbox;
let listener: Server;
let port: number;
const accepted: Socket[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox(110_000);
  listener = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  listener?.close();
  await sandbox?.close();
});

const exec = (language: string, code: string, extra: Record<string, unknown> = {}) =>
  sandbox.call("sandbox_exec", { language, code, ...extra });

async function expectStillServing() {
  const answer = await exec("bash", "echo still here");
  expect(answer.result.structured_content).toMatchObject({ exit_code: 0, stdout: "still here\n" });
}

describe("sandbox isolation", needs("sandbox"), () => {
  it("cannot read the host's /etc/shadow, the service's files or its workspaces", async () => {
    const answer = await exec(
      "bash",
      [
        "cat /etc/shadow && echo READ-SHADOW",
        `cat ${process.cwd()}/package.json && echo READ-SERVICE`,
        `ls ${sandbox.stateDir} && echo READ-STATE`,
        "ls /root /home /var 2>&1 | head -3",
        "ls /etc",
      ].join("; "),
    );
    const out = answer.result.structured_content as { stdout: string; stderr: string };
    expect(out.stdout).not.toMatch(/READ-/);
    expect(out.stderr).toMatch(/\/etc\/shadow: No such file or directory/);
    // only the dynamic linker's cache and the time zone are there of the host's /etc
    expect(out.stdout.trim().split("\n").slice(-2)).toEqual(["ld.so.cache", "localtime"]);
    await expectStillServing();
  });

  it("sees nothing of the service's environment: no token, a cleared environment", async () => {
    const answer = await exec("bash", "env; echo ---; tr '\\0' '\\n' < /proc/1/environ");
    const [env, initial] = (answer.result.structured_content as { stdout: string }).stdout.split("---\n");
    expect(answer.result.structured_content).not.toMatchObject({
      stdout: expect.stringContaining(sandbox.token),
    });
    expect(env?.trim().split("\n").sort()).toEqual([
      "HOME=/workspace",
      "LANG=C.UTF-8",
      "PATH=/usr/bin",
      "PWD=/workspace",
      "SHLVL=1",
      "TMPDIR=/tmp",
      "_=/usr/bin/env",
    ]);
    // what the program started with, before bash added its own
    expect(initial?.trim().split("\n").sort()).toEqual([
      "HOME=/workspace",
      "LANG=C.UTF-8",
      "PATH=/usr/bin",
      "PWD=/workspace",
      "TMPDIR=/tmp",
    ]);
  });

  it("cannot open a TCP connection to a port listening on the host's 127.0.0.1", async () => {
    const answer = await exec(
      "python",
      `import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(("127.0.0.1", ${port}))\nprint("CONNECTED")`,
    );
    const out = answer.result.structured_content as { stdout: string; stderr: string; exit_code: number };
    expect(out.stdout).not.toContain("CONNECTED");
    expect(out.exit_code).not.toBe(0);
    expect(out.stderr).toMatch(/ConnectionRefusedError|Network is unreachable/);
    expect(accepted).toHaveLength(0);
    // nothing but loopback, and that one is not the host's
    const ifaces = await exec("bash", "cat /proc/net/dev | tail -n +3 | cut -d: -f1");
    expect((ifaces.result.structured_content as { stdout: string }).stdout.trim()).toBe("lo");
  });

  it("survives a fork bomb: the process limit holds, the wall-clock kill takes every process", async () => {
    const tag = marker();
    const answer = await exec(
      "bash",
      `exec -a bomb-${tag} bash -c 'bomb() { bomb | bomb & }; bomb; sleep 30'`,
      {
        timeout_seconds: 2,
      },
    );
    const out = answer.result.structured_content as {
      timed_out: boolean;
      stderr: string;
      truncated: boolean;
    };
    expect(out.timed_out).toBe(true);
    expect(out.stderr).toMatch(/Resource temporarily unavailable/);
    await eventually(() => processesWith(tag).length === 0, 3000, "the fork bomb's processes are gone");
    await expectStillServing();
  });

  it("kills an infinite loop at the wall-clock limit", async () => {
    const tag = marker();
    const started = Date.now();
    const answer = await exec("bash", `exec -a loop-${tag} python3 -c 'while True: pass'`, {
      timeout_seconds: 1,
    });
    const out = answer.result.structured_content as { timed_out: boolean; exit_code: number | null };
    expect(out).toMatchObject({ timed_out: true, exit_code: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(answer.text).toMatch(/killed at the wall-clock limit of 1 s/);
    expect(processesWith(tag)).toEqual([]);
  });

  it("stops a CPU-bound process at the CPU limit even without a wall-clock kill", async () => {
    const limited = await startTestSandbox(110_100, { limits: { cpu_seconds: 1 } });
    try {
      // a child meets the limit as SIGXCPU; the program itself, pid 1 of its namespace, as SIGKILL
      const answer = await limited.call("sandbox_exec", {
        language: "bash",
        code: "python3 -c 'while True: pass'; echo child=$?; while :; do :; done",
        timeout_seconds: 10,
      });
      expect(answer.result.structured_content).toMatchObject({
        exit_code: 137,
        timed_out: false,
        stdout: "child=152\n",
      });
      expect(answer.text).toContain("SIGKILL: the CPU time limit of 1 s");
    } finally {
      await limited.close();
    }
  });

  it("runs code below the service's priority, and it cannot raise its own", async () => {
    const answer = await exec(
      "python",
      [
        "import os, subprocess, sys",
        "print(os.nice(0))",
        "print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'], capture_output=True, text=True).stdout.strip())",
        "print(open('/proc/self/autogroup').read().split()[-1])",
        "try:",
        "    os.nice(-1)",
        "    print('raised')",
        "except PermissionError:",
        "    print('refused')",
      ].join("\n"),
    );
    // limits.nice, 10 by default, in the program and whatever it starts, and its session's autogroup
    expect(answer.result.structured_content).toMatchObject({ exit_code: 0, stdout: "10\n10\n10\nrefused\n" });
    await expectStillServing();
  });

  it("refuses a memory hog its memory, at memory_bytes", async () => {
    const answer = await exec(
      "python",
      [
        "import sys",
        "hog = []",
        "try:",
        "    while True:",
        "        hog.append(bytearray(16 * 1024 * 1024))",
        "except MemoryError:",
        "    print(len(hog) * 16)",
        "    raise",
      ].join("\n"),
    );
    const out = answer.result.structured_content as {
      exit_code: number;
      stdout: string;
      stderr: string;
      timed_out: boolean;
    };
    expect(out.timed_out).toBe(false);
    expect(out.exit_code).not.toBe(0);
    expect(out.stderr).toContain("MemoryError");
    // stopped by the heap limit (256 MiB here), not by the address-space one above it
    const heldMiB = Number(out.stdout.trim());
    expect(heldMiB).toBeGreaterThan(128);
    expect(heldMiB).toBeLessThan(256);
    await expectStillServing();
  });

  it("stops a file at max_file_bytes and a process at max_open_files", async () => {
    const limited = await startTestSandbox(110_200, {
      limits: { max_file_bytes: 1_048_576, max_open_files: 32 },
    });
    try {
      const answer = await limited.call("sandbox_exec", {
        language: "bash",
        code: [
          "head -c 5000000 /dev/zero > big; echo write=$?; stat -c %s big",
          'python3 -c \'import os\nfds = []\ntry:\n    while True: fds.append(os.open("/dev/null", 0))\nexcept OSError as e: print("fds", len(fds), e.strerror)\'',
        ].join("\n"),
      });
      const out = answer.result.structured_content as { stdout: string; stderr: string };
      // SIGXFSZ (exit 128 + 25) at the limit, with the file cut there
      expect(out.stdout).toContain("write=153\n1048576\n");
      expect(out.stdout).toMatch(/fds (2[0-9]|3[0-2]) Too many open files/);
    } finally {
      await limited.close();
    }
  });

  it("truncates 10 MB of output to the cap and flags it", async () => {
    const answer = await exec(
      "python",
      "import sys\nsys.stdout.write('x' * 10_000_000)\nprint('done', file=sys.stderr)",
    );
    const out = answer.result.structured_content as {
      stdout: string;
      stderr: string;
      truncated: boolean;
      exit_code: number;
    };
    expect(out.exit_code).toBe(0);
    expect(out.truncated).toBe(true);
    expect(out.stdout).toHaveLength(65_536);
    expect(out.stderr).toBe("done\n");
    expect(answer.text).toContain("[output truncated");
  });

  it("has no writable place but the workspace, /tmp and /dev/shm, each bounded", async () => {
    const answer = await exec(
      "bash",
      [
        "for p in / /usr /usr/bin /etc /dev /proc; do touch $p/x 2>/dev/null && echo WROTE $p; done",
        "head -c 20000000 /dev/zero > /tmp/big; echo tmp=$?",
        "touch /workspace/ok && echo workspace ok",
      ].join("; "),
    );
    const out = answer.result.structured_content as { stdout: string; stderr: string };
    expect(out.stdout).not.toContain("WROTE");
    expect(out.stdout).toContain("tmp=1");
    expect(out.stderr).toContain("No space left on device");
    expect(out.stdout).toContain("workspace ok");
  });

  it("refuses a symlink pointing out of the workspace, in every file tool", async () => {
    await exec("bash", "ln -s /etc/passwd passwd; ln -s / root; ln -s .. up");
    for (const path of ["passwd", "root/etc/passwd", "up/x"]) {
      const read = await sandbox.call("sandbox_read_file", { path });
      expect(read.result.is_error).toBe(true);
      expect(read.result.structured_content).toMatchObject({ error: { code: "symlink_refused" } });
    }
    const write = await sandbox.call("sandbox_write_file", { path: "root/tmp/escaped", content: "x" });
    expect(write.result.structured_content).toMatchObject({ error: { code: "symlink_refused" } });
    const list = await sandbox.call("sandbox_list", { path: "root" });
    expect(list.result.structured_content).toMatchObject({ error: { code: "symlink_refused" } });
    // inside, the links resolve in the sandbox's own tree, where the host's files are not
    const inside = await exec("bash", "cat passwd");
    expect((inside.result.structured_content as { stderr: string }).stderr).toMatch(/No such file/);
    const listed = await sandbox.call("sandbox_list", {});
    expect(listed.result.structured_content).toMatchObject({
      entries: expect.arrayContaining([{ path: "root", type: "symlink", size: 1, target: "/" }]),
    });
  });

  it("never lets the token into a log", async () => {
    await expect.poll(() => sandbox.logs()).toContain("tool call answered");
    expect(sandbox.logs()).not.toContain(sandbox.token);
  });
});
