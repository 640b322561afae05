import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FilesystemBackend } from "../../services/storage/fs-backend.js";
import { Storage } from "../../services/storage/storage.js";
import { ROOT } from "../helpers/cli.js";
import { needs } from "../helpers/host-needs.js";
import { refusal, TEST_LIMITS, unwrap } from "./backend-conformance.js";

const SCOPE = "tenants/acme/";
let root: string;
let outside: string;
let backend: FilesystemBackend;
let storage: Storage;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "storage-safety-"));
  outside = mkdtempSync(join(tmpdir(), "storage-outside-"));
  writeFileSync(join(outside, "secret.txt"), "outside secret");
  backend = await FilesystemBackend.open(root);
  storage = new Storage(backend, TEST_LIMITS);
});

afterEach(async () => {
  await backend.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const scopeDir = () => join(root, "objects", "tenants", "acme");
const text = (value: string) => Buffer.from(value);

describe("the filesystem backend never follows a symbolic link", () => {
  it("refuses a folder link inside the scope that points outside the root", async () => {
    unwrap(await storage.write(SCOPE, "ok.txt", text("ok"), {}));
    symlinkSync(outside, join(scopeDir(), "escape"));
    expect(refusal(await storage.read(SCOPE, "escape/secret.txt", {}))).toBe("symlink_refused");
    expect(refusal(await storage.stat(SCOPE, "escape/secret.txt"))).toBe("symlink_refused");
    expect(refusal(await storage.write(SCOPE, "escape/secret.txt", text("overwritten"), {}))).toBe(
      "symlink_refused",
    );
    expect(refusal(await storage.write(SCOPE, "escape/new.txt", text("planted"), {}))).toBe(
      "symlink_refused",
    );
    expect(refusal(await storage.delete(SCOPE, "escape/secret.txt", {}))).toBe("symlink_refused");
    expect(refusal(await storage.list(SCOPE, { prefix: "escape/" }))).toBe("symlink_refused");
    // a plain listing skips the link instead of walking into it
    expect(unwrap(await storage.list(SCOPE, {})).objects.map((object) => object.path)).toEqual(["ok.txt"]);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside secret");
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("refuses a file link, whether reading, replacing or deleting it", async () => {
    unwrap(await storage.write(SCOPE, "ok.txt", text("ok"), {}));
    symlinkSync(join(outside, "secret.txt"), join(scopeDir(), "link.txt"));
    expect(refusal(await storage.read(SCOPE, "link.txt", {}))).toBe("symlink_refused");
    expect(refusal(await storage.stat(SCOPE, "link.txt"))).toBe("symlink_refused");
    expect(refusal(await storage.write(SCOPE, "link.txt", text("overwritten"), {}))).toBe("symlink_refused");
    expect(refusal(await storage.delete(SCOPE, "link.txt", {}))).toBe("symlink_refused");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside secret");
  });

  it("refuses a scope folder that was replaced by a link", async () => {
    mkdirSync(join(root, "objects", "tenants"), { recursive: true });
    symlinkSync(outside, scopeDir());
    expect(refusal(await storage.read(SCOPE, "secret.txt", {}))).toBe("symlink_refused");
    expect(refusal(await storage.write(SCOPE, "x.txt", text("x"), {}))).toBe("symlink_refused");
    expect(refusal(await storage.list(SCOPE, {}))).toBe("symlink_refused");
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });
});

describe("the filesystem backend's files", () => {
  it("are plain files under ROOT/objects with the MD5 of their bytes as etag", async () => {
    const written = unwrap(await storage.write(SCOPE, "notes/a.md", text("hello"), {}));
    expect(readFileSync(join(scopeDir(), "notes", "a.md"), "utf8")).toBe("hello");
    expect(written.etag).toBe(createHash("md5").update("hello").digest("hex"));
  });

  it("see a change made outside the service: the etag follows the bytes", async () => {
    const written = unwrap(await storage.write(SCOPE, "a.md", text("hello"), {}));
    writeFileSync(join(scopeDir(), "a.md"), "changed by hand");
    const stat = unwrap(await storage.stat(SCOPE, "a.md"));
    expect(stat.etag).toBe(createHash("md5").update("changed by hand").digest("hex"));
    expect(refusal(await storage.write(SCOPE, "a.md", text("x"), { ifMatch: written.etag }))).toBe(
      "precondition_failed",
    );
  });

  it("cannot be a file and a folder at once, and a deleted folder's name is free again", async () => {
    unwrap(await storage.write(SCOPE, "a", text("file"), {}));
    const under = await storage.write(SCOPE, "a/b", text("x"), {});
    expect(refusal(under)).toBe("path_conflict");
    expect(!under.ok && under.error.message).toBe("a is a file, so it cannot hold a/b");
    unwrap(await storage.delete(SCOPE, "a", {}));
    unwrap(await storage.write(SCOPE, "a/b/c", text("deep"), {}));
    expect(refusal(await storage.write(SCOPE, "a", text("file"), {}))).toBe("path_conflict");
    expect(refusal(await storage.read(SCOPE, "a", {}))).toBe("not_found");
    unwrap(await storage.delete(SCOPE, "a/b/c", {}));
    expect(existsSync(join(scopeDir(), "a"))).toBe(false);
    unwrap(await storage.write(SCOPE, "a", text("file again"), {}));
  });

  it("left in staging by a write that never finished are dropped at the next start", async () => {
    unwrap(await storage.write(SCOPE, "kept.txt", text("kept"), {}));
    writeFileSync(join(root, "staging", "crashed.tmp"), "half a write");
    await backend.close();
    backend = await FilesystemBackend.open(root);
    storage = new Storage(backend, TEST_LIMITS);
    expect(readdirSync(join(root, "staging"))).toEqual([]);
    expect(await storage.usage(SCOPE)).toEqual({ bytes: 4, objects: 1 });
  });
});

describe("the filesystem backend's root lock", () => {
  it("keeps a second service off a root in use, and frees it on close", async () => {
    await expect(FilesystemBackend.open(root)).rejects.toThrow(
      `another storage service (pid ${process.pid})`,
    );
    await backend.close();
    backend = await FilesystemBackend.open(root);
  });

  it("takes over the lock of a service that died", async () => {
    await backend.close();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    writeFileSync(join(root, "service.lock"), dead.stdout);
    backend = await FilesystemBackend.open(root);
    expect(readFileSync(join(root, "service.lock"), "utf8")).toBe(String(process.pid));
  });
});

// A real full disk: a 1 MiB tmpfs, mounted in a private mount namespace so the host never sees it.
describe("a write that fails part-way (the disk is full)", needs("mount"), () => {
  it("leaves the old object whole and no temporary file behind", () => {
    const dir = mkdtempSync(join(tmpdir(), "storage-full-"));
    const script = join(dir, "fill.mjs");
    writeFileSync(
      script,
      `import { readdirSync } from "node:fs";
import { FilesystemBackend } from ${JSON.stringify(join(ROOT, "dist/services/storage/fs-backend.js"))};
import { Storage } from ${JSON.stringify(join(ROOT, "dist/services/storage/storage.js"))};
const root = process.argv[2];
const backend = await FilesystemBackend.open(root);
const limits = { maxObjectBytes: 4194304, maxReadBytes: 4194304, quotaBytes: 1e9, quotaObjects: 100, maxListLimit: 10 };
const storage = new Storage(backend, limits);
const first = await storage.write("tenants/acme/", "doc.bin", Buffer.alloc(400000, 1), {});
let failure;
try { await storage.write("tenants/acme/", "doc.bin", Buffer.alloc(900000, 2), {}); } catch (error) { failure = error.code; }
const read = await storage.read("tenants/acme/", "doc.bin", {});
console.log(JSON.stringify({
  first: first.ok, failure, size: read.value.data.length, intact: read.value.data.every((b) => b === 1),
  etag: read.value.info.etag === first.value.etag, staging: readdirSync(root + "/staging"),
}));
`,
    );
    const mount = join(dir, "disk");
    mkdirSync(mount);
    const run = spawnSync(
      "unshare",
      [
        "-rm",
        "sh",
        "-c",
        'mount -t tmpfs -o size=1m tmpfs "$1" && exec "$0" "$2" "$1"',
        process.execPath,
        mount,
        script,
      ],
      { encoding: "utf8", timeout: 15_000 },
    );
    rmSync(dir, { recursive: true, force: true });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      first: true,
      failure: "ENOSPC",
      size: 400000,
      intact: true,
      etag: true,
      staging: [],
    });
  });
});
