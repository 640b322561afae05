import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StorageBackend } from "../../services/storage/backend.js";
import type { Outcome, StorageErrorCode } from "../../services/storage/errors.js";
import { scopePrefix } from "../../services/storage/paths.js";
import { Storage, type StorageLimits } from "../../services/storage/storage.js";

export interface OpenedBackend {
  backend: StorageBackend;
  /** Close this backend and open another over the same data, as a restarted service would. */
  reopen: () => Promise<StorageBackend>;
  cleanup: () => Promise<void>;
}

export interface Quirks {
  /**
   * The store lists by walking folders, so "a/c" comes before "a-b"; S3 itself sorts keys by their
   * UTF-8 bytes ("a-b" first). s3rver does this.
   */
  listsFoldersFirst?: boolean;
  /** A ranged GET of an empty object resets the connection; S3 answers 416. s3rver does this. */
  breaksOnRangesOfEmptyObjects?: boolean;
}

export const TEST_LIMITS: StorageLimits = {
  maxObjectBytes: 64 * 1024,
  maxReadBytes: 16 * 1024,
  quotaBytes: 1024 * 1024,
  quotaObjects: 1000,
  maxListLimit: 50,
};

let scopes = 0;
/** A scope of its own for each test, so tests cannot see each other's objects. */
const freshScope = (mode: "tenant" | "session" = "tenant") =>
  unwrap(
    scopePrefix(mode, {
      tenant_id: `tenant-${++scopes}-${randomBytes(3).toString("hex")}`,
      session_id: "ses_1",
    }),
  );

export function unwrap<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.value;
}

export function refusal(outcome: Outcome<unknown>): StorageErrorCode {
  if (outcome.ok) throw new Error(`expected a refusal, got success: ${JSON.stringify(outcome.value)}`);
  return outcome.error.code;
}

const text = (value: string) => Buffer.from(value, "utf8");
const md5 = (data: Buffer) => createHash("md5").update(data).digest("hex");

/**
 * The one suite every storage backend passes, run through Storage (where paths, conditions and
 * quotas are enforced) against a real backend: the filesystem, and a real S3-compatible server.
 */
export function backendConformance(
  name: string,
  open: () => Promise<OpenedBackend>,
  quirks: Quirks = {},
): void {
  describe(`storage backend conformance: ${name}`, () => {
    let opened: OpenedBackend;
    let storage: Storage;
    const withLimits = (limits: Partial<StorageLimits>) =>
      new Storage(opened.backend, { ...TEST_LIMITS, ...limits });

    beforeAll(async () => {
      opened = await open();
      storage = new Storage(opened.backend, TEST_LIMITS);
    });
    afterAll(async () => {
      await opened?.cleanup();
    });

    it("writes, reads back, stats, and deletes an object", async () => {
      const scope = freshScope();
      const written = unwrap(await storage.write(scope, "notes/todo.md", text("buy milk\n"), {}));
      expect(written).toMatchObject({ path: "notes/todo.md", size: 9, created: true });
      expect(written.etag).toMatch(/^[0-9a-f]{32}$/);
      const read = unwrap(await storage.read(scope, "notes/todo.md", {}));
      expect(read.data.toString("utf8")).toBe("buy milk\n");
      expect(read.info).toMatchObject({ path: "notes/todo.md", size: 9, etag: written.etag });
      const stat = unwrap(await storage.stat(scope, "notes/todo.md"));
      expect(stat).toMatchObject({ path: "notes/todo.md", size: 9, etag: written.etag });
      expect(Math.abs(stat.modified.getTime() - Date.now())).toBeLessThan(60_000);
      expect(unwrap(await storage.delete(scope, "notes/todo.md", {})).etag).toBe(written.etag);
      expect(refusal(await storage.stat(scope, "notes/todo.md"))).toBe("not_found");
      expect(refusal(await storage.read(scope, "notes/todo.md", {}))).toBe("not_found");
      expect(refusal(await storage.delete(scope, "notes/todo.md", {}))).toBe("not_found");
    });

    it("replaces an object whole, with a new etag, and keeps binary bytes exact", async () => {
      const scope = freshScope();
      const first = unwrap(await storage.write(scope, "blob.bin", randomBytes(40_000), {}));
      const bytes = randomBytes(50_000);
      const second = unwrap(await storage.write(scope, "blob.bin", bytes, {}));
      expect(second.created).toBe(false);
      expect(second.etag).not.toBe(first.etag);
      const back = Buffer.concat([
        unwrap(await storage.read(scope, "blob.bin", { offset: 0, length: 16_384 })).data,
        unwrap(await storage.read(scope, "blob.bin", { offset: 16_384, length: 16_384 })).data,
        unwrap(await storage.read(scope, "blob.bin", { offset: 32_768, length: 16_384 })).data,
        unwrap(await storage.read(scope, "blob.bin", { offset: 49_152, length: 16_384 })).data,
      ]);
      expect(md5(back)).toBe(md5(bytes));
    });

    it("reads byte ranges, cut at the end, and refuses offsets past it", async () => {
      const scope = freshScope();
      unwrap(await storage.write(scope, "abc.txt", text("abcdefghij"), {}));
      expect(unwrap(await storage.read(scope, "abc.txt", { offset: 2, length: 3 })).data.toString()).toBe(
        "cde",
      );
      expect(unwrap(await storage.read(scope, "abc.txt", { offset: 8, length: 100 })).data.toString()).toBe(
        "ij",
      );
      expect(unwrap(await storage.read(scope, "abc.txt", { offset: 4 })).data.toString()).toBe("efghij");
      const atEnd = unwrap(await storage.read(scope, "abc.txt", { offset: 10, length: 5 }));
      expect(atEnd.data.length).toBe(0);
      expect(atEnd.info.size).toBe(10);
      expect(unwrap(await storage.read(scope, "abc.txt", { offset: 3, length: 0 })).data.length).toBe(0);
      expect(refusal(await storage.read(scope, "abc.txt", { offset: 11, length: 1 }))).toBe("invalid_range");
    });

    it.skipIf(quirks.breaksOnRangesOfEmptyObjects)("stores and reads an empty object", async () => {
      const scope = freshScope();
      expect(unwrap(await storage.write(scope, "empty", Buffer.alloc(0), {})).size).toBe(0);
      const empty = unwrap(await storage.read(scope, "empty", {}));
      expect(empty.data.length).toBe(0);
      expect(empty.info.size).toBe(0);
      expect(refusal(await storage.read(scope, "empty", { offset: 1 }))).toBe("invalid_range");
    });

    it("refuses reads over max_read_bytes, and reads the same object in ranges", async () => {
      const scope = freshScope();
      unwrap(await storage.write(scope, "big.log", Buffer.alloc(20_000, "x"), {}));
      expect(refusal(await storage.read(scope, "big.log", {}))).toBe("range_too_large");
      expect(refusal(await storage.read(scope, "big.log", { length: 16_385 }))).toBe("range_too_large");
      expect(unwrap(await storage.read(scope, "big.log", { offset: 4000 })).data.length).toBe(16_000);
    });

    it("creates with if_none_match only when nothing is there", async () => {
      const scope = freshScope();
      const first = unwrap(await storage.write(scope, "once.txt", text("first"), { ifNoneMatch: true }));
      const again = await storage.write(scope, "once.txt", text("second"), { ifNoneMatch: true });
      expect(refusal(again)).toBe("precondition_failed");
      expect(!again.ok && again.error.details).toEqual({ current_etag: first.etag });
      expect(unwrap(await storage.read(scope, "once.txt", {})).data.toString()).toBe("first");
    });

    it("writes with if_match only over the etag given", async () => {
      const scope = freshScope();
      const v1 = unwrap(await storage.write(scope, "doc.md", text("v1"), {}));
      const v2 = unwrap(await storage.write(scope, "doc.md", text("v2"), { ifMatch: v1.etag }));
      expect(refusal(await storage.write(scope, "doc.md", text("stale"), { ifMatch: v1.etag }))).toBe(
        "precondition_failed",
      );
      // the quoted form HTTP tools show is the same etag
      unwrap(await storage.write(scope, "doc.md", text("v3"), { ifMatch: `"${v2.etag}"` }));
      expect(unwrap(await storage.read(scope, "doc.md", {})).data.toString()).toBe("v3");
      expect(refusal(await storage.write(scope, "nothing.md", text("x"), { ifMatch: v1.etag }))).toBe(
        "precondition_failed",
      );
      expect(refusal(await storage.stat(scope, "nothing.md"))).toBe("not_found");
      expect(
        refusal(await storage.write(scope, "doc.md", text("x"), { ifMatch: v1.etag, ifNoneMatch: true })),
      ).toBe("invalid_argument");
    });

    it("lets exactly one of many concurrent writers with the same if_match win", async () => {
      const scope = freshScope();
      const base = unwrap(await storage.write(scope, "counter", text("0"), {}));
      const attempts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          storage.write(scope, "counter", text(`writer ${i}`), { ifMatch: base.etag }),
        ),
      );
      const winners = attempts.flatMap((attempt, i) => (attempt.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const attempt of attempts) if (!attempt.ok) expect(attempt.error.code).toBe("precondition_failed");
      expect(unwrap(await storage.read(scope, "counter", {})).data.toString()).toBe(`writer ${winners[0]}`);
    });

    it("lets exactly one of many concurrent creators with if_none_match win", async () => {
      const scope = freshScope();
      const attempts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          storage.write(scope, "lock", text(`owner ${i}`), { ifNoneMatch: true }),
        ),
      );
      const winners = attempts.flatMap((attempt, i) => (attempt.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(unwrap(await storage.read(scope, "lock", {})).data.toString()).toBe(`owner ${winners[0]}`);
    });

    it("deletes with if_match only over the etag given", async () => {
      const scope = freshScope();
      const v1 = unwrap(await storage.write(scope, "x.txt", text("one"), {}));
      unwrap(await storage.write(scope, "x.txt", text("two"), {}));
      expect(refusal(await storage.delete(scope, "x.txt", { ifMatch: v1.etag }))).toBe("precondition_failed");
      const current = unwrap(await storage.stat(scope, "x.txt"));
      unwrap(await storage.delete(scope, "x.txt", { ifMatch: current.etag }));
      expect(refusal(await storage.stat(scope, "x.txt"))).toBe("not_found");
    });

    it("lists in key order with prefixes, and pages through every object exactly once", async () => {
      const scope = freshScope();
      const paths = [
        "b.txt",
        "a.txt",
        "notes/2026-01.md",
        "notes/2026-02.md",
        "notes/old/1.md",
        "z/é.md",
        "c.txt",
      ];
      for (const path of paths) unwrap(await storage.write(scope, path, text(path), {}));
      const all = unwrap(await storage.list(scope, {}));
      expect(all.objects.map((object) => object.path)).toEqual([...paths].sort());
      expect(all.nextCursor).toBeUndefined();
      expect(all.objects.find((object) => object.path === "c.txt")).toMatchObject({ size: 5 });
      const notes = unwrap(await storage.list(scope, { prefix: "notes/" }));
      expect(notes.objects.map((object) => object.path)).toEqual([
        "notes/2026-01.md",
        "notes/2026-02.md",
        "notes/old/1.md",
      ]);
      const partial = unwrap(await storage.list(scope, { prefix: "notes/2026-0" }));
      expect(partial.objects.map((object) => object.path)).toEqual(["notes/2026-01.md", "notes/2026-02.md"]);
      expect(unwrap(await storage.list(scope, { prefix: "nothing/" })).objects).toEqual([]);
      expect(unwrap(await storage.list(scope, { prefix: "a.txt/" })).objects).toEqual([]);

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = unwrap(await storage.list(scope, { limit: 2, ...(cursor && { cursor }) }));
        expect(page.objects.length).toBeLessThanOrEqual(2);
        seen.push(...page.objects.map((object) => object.path));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual([...paths].sort());
      expect(refusal(await storage.list(scope, { cursor: "not a cursor!" }))).toBe("invalid_argument");
      expect(refusal(await storage.list(scope, { limit: 51 }))).toBe("invalid_argument");
      expect(refusal(await storage.list(scope, { prefix: "../" }))).toBe("invalid_path");
    });

    it.skipIf(quirks.listsFoldersFirst)("lists in UTF-8 byte order, as S3 does", async () => {
      const scope = freshScope();
      const paths = ["a/c", "a.txt", "a-b", "\u{1F600}.txt", "\uFF21.txt", "Z"];
      for (const path of paths) unwrap(await storage.write(scope, path, text(path), {}));
      const listed = unwrap(await storage.list(scope, {})).objects.map((object) => object.path);
      expect(listed).toEqual(["Z", "a-b", "a.txt", "a/c", "\uFF21.txt", "\u{1F600}.txt"]);
    });

    it("keeps scopes apart: the same path in two scopes is two objects", async () => {
      const mine = freshScope();
      const theirs = freshScope();
      unwrap(await storage.write(mine, "secret.txt", text("mine"), {}));
      expect(refusal(await storage.stat(theirs, "secret.txt"))).toBe("not_found");
      expect(refusal(await storage.read(theirs, "secret.txt", {}))).toBe("not_found");
      expect(refusal(await storage.delete(theirs, "secret.txt", {}))).toBe("not_found");
      expect(unwrap(await storage.list(theirs, {})).objects).toEqual([]);
      unwrap(await storage.write(theirs, "secret.txt", text("theirs"), {}));
      expect(unwrap(await storage.read(mine, "secret.txt", {})).data.toString()).toBe("mine");
    });

    it("names one object whichever Unicode normal form the path comes in", async () => {
      const scope = freshScope();
      unwrap(await storage.write(scope, "caf\u0065\u0301.txt", text("decomposed"), {}));
      expect(unwrap(await storage.read(scope, "caf\u00e9.txt", {})).data.toString()).toBe("decomposed");
      expect(unwrap(await storage.list(scope, {})).objects.map((object) => object.path)).toEqual([
        "caf\u00e9.txt",
      ]);
    });

    it("refuses paths that try to leave the scope, before the backend sees them", async () => {
      const scope = freshScope();
      for (const path of [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "..",
        ".",
        "a/./b",
        "a//b",
        "a\u0000b",
        "C:\\x",
        "a\\..\\b",
        "dir/",
      ]) {
        expect(refusal(await storage.write(scope, path, text("x"), {})), path).toBe("invalid_path");
        expect(refusal(await storage.read(scope, path, {})), path).toBe("invalid_path");
        expect(refusal(await storage.stat(scope, path)), path).toBe("invalid_path");
        expect(refusal(await storage.delete(scope, path, {})), path).toBe("invalid_path");
      }
      expect(unwrap(await storage.list(scope, {})).objects).toEqual([]);
    });

    it("refuses objects over max_object_bytes and writes nothing", async () => {
      const scope = freshScope();
      expect(refusal(await storage.write(scope, "huge", Buffer.alloc(64 * 1024 + 1), {}))).toBe("too_large");
      expect(refusal(await storage.stat(scope, "huge"))).toBe("not_found");
      unwrap(await storage.write(scope, "max", Buffer.alloc(64 * 1024), {}));
    });

    it("enforces the byte quota per scope, counting replacements by their growth", async () => {
      const small = withLimits({ quotaBytes: 10_000 });
      const scope = freshScope();
      unwrap(await small.write(scope, "a", Buffer.alloc(6000), {}));
      const over = await small.write(scope, "b", Buffer.alloc(5000), {});
      expect(refusal(over)).toBe("quota_exceeded");
      expect(!over.ok && over.error.details).toEqual({ used_bytes: 6000, quota_bytes: 10_000 });
      expect(refusal(await small.stat(scope, "b"))).toBe("not_found");
      unwrap(await small.write(scope, "b", Buffer.alloc(4000), {}));
      expect(refusal(await small.write(scope, "a", Buffer.alloc(6001), {}))).toBe("quota_exceeded");
      unwrap(await small.write(scope, "a", Buffer.alloc(1000), {}));
      unwrap(await small.write(scope, "c", Buffer.alloc(5000), {}));
      unwrap(await small.delete(scope, "c", {}));
      unwrap(await small.write(scope, "d", Buffer.alloc(5000), {}));
      expect(await small.usage(scope)).toEqual({ bytes: 10_000, objects: 3 });
      // another scope has its own quota
      unwrap(await small.write(freshScope(), "a", Buffer.alloc(9000), {}));
    });

    it("enforces the object quota per scope", async () => {
      const small = withLimits({ quotaObjects: 3 });
      const scope = freshScope();
      for (const path of ["1", "2", "3"]) unwrap(await small.write(scope, path, text(path), {}));
      expect(refusal(await small.write(scope, "4", text("4"), {}))).toBe("quota_exceeded");
      unwrap(await small.write(scope, "3", text("replaced"), {}));
      unwrap(await small.delete(scope, "1", {}));
      unwrap(await small.write(scope, "4", text("4"), {}));
    });

    it("lets a scope over a lowered object quota replace and delete its objects, never add one", async () => {
      const scope = freshScope();
      for (const path of ["1", "2", "3"])
        unwrap(await withLimits({ quotaObjects: 3 }).write(scope, path, text("three"), {}));
      const lowered = withLimits({ quotaObjects: 2 });
      expect(refusal(await lowered.write(scope, "4", text("4"), {}))).toBe("quota_exceeded");
      expect(unwrap(await lowered.write(scope, "3", text("3"), {})).created).toBe(false);
      expect(unwrap(await lowered.write(scope, "2", text("longer than before"), {})).created).toBe(false);
      unwrap(await lowered.delete(scope, "1", {}));
      expect(refusal(await lowered.write(scope, "1", text("1"), {}))).toBe("quota_exceeded");
      expect(await lowered.usage(scope)).toEqual({ bytes: 19, objects: 2 });
    });

    it("counts usage from the backend after a restart, and keeps every object", async () => {
      const scope = freshScope();
      const written = [];
      for (let i = 0; i < 5; i++)
        written.push(unwrap(await storage.write(scope, `kept/${i}`, randomBytes(1000 + i), {})));
      opened.backend = await opened.reopen();
      storage = new Storage(opened.backend, TEST_LIMITS);
      expect(await storage.usage(scope)).toEqual({ bytes: 5010, objects: 5 });
      for (const object of written) {
        expect(unwrap(await storage.stat(scope, object.path)).etag).toBe(object.etag);
      }
    });
  });
}
