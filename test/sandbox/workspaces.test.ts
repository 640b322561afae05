import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceName } from "../../services/sandbox/workspaces.js";
import { needs } from "../helpers/host-needs.js";
import { mountTmpfs } from "./host-mount.js";
import { eventually, startTestSandbox, type TestSandbox } from "./sandbox-service.js";

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(120_000);
});

afterAll(async () => {
  await sandbox?.close();
});

const stdoutOf = (answer: { result: { structured_content?: Record<string, unknown> } }) =>
  (answer.result.structured_content as { stdout: string }).stdout;

describe("workspaces", needs("sandbox"), () => {
  it("keep files across calls of one session, between the file tools and code", async () => {
    const session = { session: "ses_persist" };
    const wrote = await sandbox.call(
      "sandbox_write_file",
      { path: "data/in.txt", content: "hello" },
      session,
    );
    expect(wrote.result.structured_content).toEqual({ path: "data/in.txt", size: 5 });
    const ran = await sandbox.call(
      "sandbox_exec",
      {
        language: "python",
        code: "s = open('data/in.txt').read()\nopen('out.txt', 'w').write(s.upper())\nprint(s)",
      },
      session,
    );
    expect(stdoutOf(ran)).toBe("hello\n");
    const read = await sandbox.call("sandbox_read_file", { path: "/workspace/out.txt" }, session);
    expect(read.result.structured_content).toEqual({
      path: "out.txt",
      size: 5,
      encoding: "utf8",
      content: "HELLO",
      truncated: false,
    });
    // code can change the files the service wrote: they belong to the workspace's user
    const appended = await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "echo more >> data/in.txt && cat data/in.txt" },
      session,
    );
    expect(stdoutOf(appended)).toBe("hellomore\n");
    const listed = await sandbox.call("sandbox_list", { recursive: true }, session);
    expect(listed.result.structured_content).toEqual({
      entries: [
        { path: "data", type: "directory", size: expect.any(Number) },
        { path: "data/in.txt", type: "file", size: 10 },
        { path: "out.txt", type: "file", size: 5 },
      ],
      truncated: false,
    });
    expect(listed.text).toContain("data/in.txt (10 bytes)");
  });

  it("are invisible to another session and to another tenant with the same session id", async () => {
    await sandbox.call("sandbox_write_file", { path: "secret.txt", content: "mine" }, { session: "ses_a" });
    for (const other of [{ session: "ses_b" }, { tenant: "globex", session: "ses_a" }]) {
      const read = await sandbox.call("sandbox_read_file", { path: "secret.txt" }, other);
      expect(read.result.structured_content).toMatchObject({ error: { code: "not_found" } });
      const listed = await sandbox.call("sandbox_list", {}, other);
      expect(listed.result.structured_content).toEqual({ entries: [], truncated: false });
      const ran = await sandbox.call(
        "sandbox_exec",
        { language: "bash", code: "cat secret.txt; ls -a /workspace; ls /workspace/.. " },
        other,
      );
      expect(stdoutOf(ran)).not.toContain("mine");
      expect(stdoutOf(ran)).not.toContain("secret");
    }
    // identity in the arguments is refused, never used: the workspace is the top level's
    const smuggled = await sandbox.call(
      "sandbox_read_file",
      { path: "secret.txt", tenant_id: "acme", session_id: "ses_a" },
      { session: "ses_b" },
    );
    expect(smuggled.result.is_error).toBe(true);
    expect(smuggled.text).toMatch(/tenant_id/);
    expect(JSON.stringify(smuggled.result)).not.toContain("mine");
    // ids that look like paths shape nothing: the directory name is a digest of both
    const tricky = { tenant: "..", session: "../ses_a" };
    await sandbox.call("sandbox_write_file", { path: "t.txt", content: "x" }, tricky);
    const dirs = readdirSync(join(sandbox.stateDir, "workspaces"));
    expect(dirs).toContain(workspaceName({ tenantId: "..", sessionId: "../ses_a" }));
    expect(dirs.every((name) => /^[0-9a-f]{32}$/.test(name))).toBe(true);
  });

  it("give each session its own host user, never root", async () => {
    await sandbox.call("sandbox_list", {}, { session: "ses_uid_1" });
    await sandbox.call("sandbox_list", {}, { session: "ses_uid_2" });
    const uidOf = (session: string) =>
      statSync(join(sandbox.stateDir, "workspaces", workspaceName({ tenantId: "acme", sessionId: session })))
        .uid;
    expect(uidOf("ses_uid_1")).toBeGreaterThanOrEqual(120_000);
    expect(uidOf("ses_uid_1")).not.toBe(uidOf("ses_uid_2"));
  });

  it("refuse paths that leave the workspace", async () => {
    for (const path of ["../x", "a/../../x", "/etc/passwd", "/workspace/../etc/passwd", "a\u0000b"]) {
      const read = await sandbox.call("sandbox_read_file", { path });
      expect(read.result.structured_content, path).toMatchObject({ error: { code: "invalid_path" } });
      const write = await sandbox.call("sandbox_write_file", { path, content: "x" });
      expect(write.result.structured_content, path).toMatchObject({ error: { code: "invalid_path" } });
    }
    const read = await sandbox.call("sandbox_read_file", { path: "/etc/passwd" });
    expect(read.text).toMatch(/relative to it/);
  });

  it("read binary files as base64, cap what is read, and refuse directories and missing files", async () => {
    const session = { session: "ses_files" };
    await sandbox.call(
      "sandbox_write_file",
      { path: "bin", content: Buffer.from([0, 255, 1]).toString("base64"), encoding: "base64" },
      session,
    );
    const binary = await sandbox.call("sandbox_read_file", { path: "bin" }, session);
    expect(binary.result.structured_content).toMatchObject({ encoding: "base64", content: "AP8B", size: 3 });
    await sandbox.call(
      "sandbox_exec",
      { language: "bash", code: "head -c 300000 /dev/zero | tr '\\0' a > big; mkdir d; mkfifo pipe" },
      session,
    );
    const big = await sandbox.call("sandbox_read_file", { path: "big" }, session);
    expect(big.result.structured_content).toMatchObject({ size: 300_000, truncated: true });
    expect((big.result.structured_content as { content: string }).content).toHaveLength(262_144);
    const dir = await sandbox.call("sandbox_read_file", { path: "d" }, session);
    expect(dir.result.structured_content).toMatchObject({ error: { code: "not_a_file" } });
    // a FIFO must not hang the service
    const fifo = await sandbox.call("sandbox_read_file", { path: "pipe" }, session);
    expect(fifo.result.structured_content).toMatchObject({ error: { code: "not_a_file" } });
    const fifoWrite = await sandbox.call("sandbox_write_file", { path: "pipe", content: "x" }, session);
    expect(fifoWrite.result.structured_content).toMatchObject({ error: { code: "not_a_file" } });
    const missing = await sandbox.call("sandbox_read_file", { path: "nope" }, session);
    expect(missing.result.structured_content).toMatchObject({ error: { code: "not_found" } });
    const tooBig = await sandbox.call(
      "sandbox_write_file",
      { path: "x", content: "a".repeat(1_048_577) },
      session,
    );
    expect(tooBig.result.structured_content).toMatchObject({ error: { code: "too_large" } });
  });

  it("refuse content that is not the base64 it says it is, and write nothing", async () => {
    const session = { session: "ses_base64" };
    for (const content of ["not base64!", "AAAAA", "AP8B\u00e9"]) {
      const wrote = await sandbox.call(
        "sandbox_write_file",
        { path: "b.bin", content, encoding: "base64" },
        session,
      );
      expect(wrote.result.structured_content, content).toMatchObject({ error: { code: "invalid_argument" } });
    }
    const missing = await sandbox.call("sandbox_read_file", { path: "b.bin" }, session);
    expect(missing.result.structured_content).toMatchObject({ error: { code: "not_found" } });
    // the standard and URL-safe alphabets, with or without padding and line breaks, as storage takes
    for (const [content, size] of [
      ["AP8B\n/w==", 4],
      ["AP-_", 3],
      ["AAE", 2],
    ] as const) {
      const wrote = await sandbox.call(
        "sandbox_write_file",
        { path: "b.bin", content, encoding: "base64" },
        session,
      );
      expect(wrote.result.structured_content, content).toEqual({ path: "b.bin", size });
    }
  });

  it("expire after the idle time and are removed, and come back empty", async () => {
    const short = await startTestSandbox(120_100, { limits: { workspace_idle_seconds: 0.5 } });
    try {
      await short.call("sandbox_write_file", { path: "keep.txt", content: "x" });
      const dir = join(
        short.stateDir,
        "workspaces",
        workspaceName({ tenantId: "acme", sessionId: "ses_one" }),
      );
      expect(existsSync(dir)).toBe(true);
      // in use by a running call, it does not expire
      const long = short.call("sandbox_exec", { language: "bash", code: "sleep 1.2; cat keep.txt" });
      expect(stdoutOf(await long)).toBe("x");
      await eventually(() => !existsSync(dir), 3000, "the idle workspace is removed");
      const listed = await short.call("sandbox_list", {});
      expect(listed.result.structured_content).toEqual({ entries: [], truncated: false });
    } finally {
      await short.close();
    }
  });

  it("are removed when idle however deep their code nests directories, and the service lives on", async () => {
    const short = await startTestSandbox(120_300, { limits: { workspace_idle_seconds: 0.5 } });
    const outside = mkdtempSync(join(tmpdir(), "sandbox-outside-"));
    writeFileSync(join(outside, "kept.txt"), "the host's");
    try {
      const dir = join(
        short.stateDir,
        "workspaces",
        workspaceName({ tenantId: "acme", sessionId: "ses_one" }),
      );
      // 2,100 levels of aa/: host paths inside pass PATH_MAX (4096 bytes) some 1,350 levels down,
      // where a path-based removal fails; the links to a host directory on the way are never followed
      const nested = await short.call("sandbox_exec", {
        language: "python",
        code: [
          "import os",
          "for depth in range(2100):",
          "    if depth % 500 == 0:",
          `        os.symlink(${JSON.stringify(outside)}, "link")`,
          "        open('file', 'w').write('x')",
          "    os.mkdir('aa')",
          "    os.chdir('aa')",
          "print('nested')",
        ].join("\n"),
      });
      expect(stdoutOf(nested)).toBe("nested\n");
      await eventually(() => !existsSync(dir), 5000, "the deep workspace is removed");
      expect(short.logs()).toContain("idle workspace removed");
      expect(readFileSync(join(outside, "kept.txt"), "utf8")).toBe("the host's");
      const listed = await short.call("sandbox_list", {});
      expect(listed.result.structured_content).toEqual({ entries: [], truncated: false });
    } finally {
      await short.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("that cannot be removed stay in use as they are, and go at a later sweep", async (ctx) => {
    const short = await startTestSandbox(120_400, { limits: { workspace_idle_seconds: 0.5 } });
    try {
      await short.call("sandbox_write_file", { path: "mnt/hidden.txt", content: "x" });
      const dir = join(
        short.stateDir,
        "workspaces",
        workspaceName({ tenantId: "acme", sessionId: "ses_one" }),
      );
      const { uid } = statSync(dir);
      // a mount point cannot be removed (EBUSY) while it is mounted
      const unmount = mountTmpfs(ctx, join(dir, "mnt"), "size=64k");
      try {
        await expect
          .poll(() => short.logs(), { timeout: 5000 })
          .toContain("an idle workspace could not be removed; the next sweep tries again");
        // its session still has it, with its own user id: nothing was forgotten half-way
        const wrote = await short.call("sandbox_write_file", { path: "again.txt", content: "y" });
        expect(wrote.result.structured_content).toEqual({ path: "again.txt", size: 1 });
        expect(statSync(join(dir, "again.txt")).uid).toBe(uid);
      } finally {
        unmount();
      }
      await eventually(() => !existsSync(dir), 5000, "the workspace is removed once it can be");
      const listed = await short.call("sandbox_list", {});
      expect(listed.result.structured_content).toEqual({ entries: [], truncated: false });
    } finally {
      await short.close();
    }
  });

  it("survive a restart of the service, and one state directory serves one service", async () => {
    const first = await startTestSandbox(120_200);
    const second = { state_dir: first.stateDir };
    try {
      await first.call("sandbox_write_file", { path: "kept.txt", content: "across restarts" });
      await expect(startTestSandbox(120_200, second)).rejects.toThrow(
        new RegExp(`another sandbox service \\(pid ${process.pid}\\) uses state_dir`),
      );
      await first.running.close();
      const again = await startTestSandbox(120_200, second);
      try {
        const read = await again.call("sandbox_read_file", { path: "kept.txt" });
        expect(read.result.structured_content).toMatchObject({ content: "across restarts" });
      } finally {
        await again.close();
      }
    } finally {
      await first.close();
    }
  });
});
