import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROOT, runNode } from "../helpers/cli.js";
import { type StartedProcess, startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";
import { envelope, postCall } from "../kit/kit-service.js";

const MAIN = join(ROOT, "dist/services/storage/main.js");
const token = `storage-token-${randomBytes(12).toString("hex")}`;
let dir: string;
let configPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "storage-process-"));
  configPath = join(dir, "storage.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(config: Record<string, unknown>): void {
  writeFileSync(configPath, JSON.stringify(config));
}

function runStorage(args: string[], env: Record<string, string> = {}) {
  return runNode(MAIN, args, env, { cwd: dir });
}

/** The service as its own process; resolves with its URL once it listens. */
function startService(): Promise<StartedProcess & { ready: string }> {
  return startProcess([MAIN, "--config", configPath], { STORAGE_TOKEN: token }, toolServiceUrlFromLog);
}

async function call(url: string, tool: string, args: Record<string, unknown>) {
  const response = await postCall(`${url}/tools/${tool}`, envelope(args), { token });
  expect(response.status).toBe(200);
  return response.json() as {
    is_error?: boolean;
    content: { text: string }[];
    structured_content: Record<string, unknown>;
  };
}

describe("the storage service process", () => {
  it("keeps every acknowledged write across a crash (SIGKILL) and a restart", async () => {
    writeConfig({
      listen: "127.0.0.1:0",
      token_env: "STORAGE_TOKEN",
      backend: { kind: "filesystem", root: "./data" },
    });
    const first = await startService();
    const files = Array.from({ length: 30 }, (_, i) => ({
      path: `runs/${i % 3}/out-${i}.txt`,
      content: `result ${i} ${"x".repeat(i * 100)}`,
    }));
    const written = await Promise.all(files.map((file) => call(first.ready, "storage_write", file)));
    for (const result of written) expect(result.is_error).toBeUndefined();
    await first.stop("SIGKILL");

    const second = await startService();
    try {
      for (const [i, file] of files.entries()) {
        const read = await call(second.ready, "storage_read", { path: file.path });
        expect(read.content[1]?.text).toBe(file.content);
        expect(read.structured_content.etag).toBe(written[i]?.structured_content.etag);
      }
      const listed = await call(second.ready, "storage_list", { prefix: "runs/" });
      expect((listed.structured_content.objects as unknown[]).length).toBe(30);
      expect(readdirSync(join(dir, "data", "staging"))).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it("refuses to share its root with a running service, saying why", async () => {
    writeConfig({
      listen: "127.0.0.1:0",
      token_env: "STORAGE_TOKEN",
      backend: { kind: "filesystem", root: "./data" },
    });
    const running = await startService();
    try {
      const second = runStorage(["--config", configPath], { STORAGE_TOKEN: token });
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/not started: another storage service \(pid \d+\) uses this root/);
    } finally {
      await running.stop();
    }
  });
});

describe("the storage command", () => {
  it("prints its usage with --help", () => {
    const help = runStorage(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/storage -config FILE -check/);
    expect(help.stdout).toMatch(/storage_write, storage_read, storage_stat, storage_list, storage_delete/);
  });

  it("checks a valid config with -check", () => {
    writeConfig({ token_env: "STORAGE_TOKEN", scope: "session" });
    const checked = runStorage(["-config", configPath, "-check"], { STORAGE_TOKEN: token });
    expect(checked).toMatchObject({
      code: 0,
      stdout: `${configPath}: valid (filesystem backend, one storage per session)\n`,
    });
  });

  it("reports every problem of a config, one per line with its path, and never a secret", () => {
    writeConfig({
      token_env: "STORAGE_TOKEN",
      scope: "everyone",
      backend: {
        kind: "s3",
        bucket: "b",
        endpoint: "ftp://store",
        access_key_id_env: "S3_KEY",
        secret_access_key_env: "S3_SECRET",
      },
      limits: { quota_bytes: -1, surprise: 1 },
    });
    const checked = runStorage(["-config", configPath, "-check"], { S3_SECRET: "s3-secret-value" });
    expect(checked.code).toBe(2);
    const lines = checked.stderr.trim().split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        `${configPath}: scope: must be one of "tenant", "session"`,
        `${configPath}: limits.surprise: unknown field`,
        `${configPath}: backend.bucket: must NOT have fewer than 3 characters`,
      ]),
    );
    expect(checked.stderr).not.toContain("s3-secret-value");

    writeConfig({
      token_env: "STORAGE_TOKEN",
      backend: {
        kind: "s3",
        bucket: "bucket",
        endpoint: "ftp://store",
        access_key_id_env: "S3_KEY",
        secret_access_key_env: "S3_SECRET",
      },
    });
    const env = runStorage(["-config", configPath, "-check"], { S3_SECRET: "s3-secret-value" });
    expect(env.stderr.trim().split("\n")).toEqual([
      `${configPath}: token_env: set the environment variable STORAGE_TOKEN to the token Brain sends`,
      `${configPath}: backend.endpoint: must be an absolute http or https URL`,
      `${configPath}: backend.access_key_id_env: set the environment variable S3_KEY to the S3 access key id`,
    ]);
  });

  it("says what to do when the config file is missing", () => {
    const missing = runStorage(["--config", join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.json: ENOENT/);
  });
});
