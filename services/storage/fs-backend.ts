import { createHash, randomBytes } from "node:crypto";
import { type BigIntStats, constants, type Dirent, type Stats } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  unlink,
} from "node:fs/promises";
import { join } from "node:path";
import type { ByteRange, ListPage, ObjectInfo, StorageBackend, Usage } from "./backend.js";
import { fail, type Outcome, ok } from "./errors.js";
import { compareKeys } from "./paths.js";

const ETAG_CACHE_ENTRIES = 50_000;
const HASH_CHUNK_BYTES = 256 * 1024;
// a delete in another scope may prune a shared parent folder between our mkdir and rename
const RENAME_ATTEMPTS = 3;

interface CachedEtag {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  etag: string;
}

/** Where a path's file is, once every folder on the way has been checked. */
interface Located {
  file: string;
  dir: string;
  /** Folders that gained an entry because this call made a folder in them. */
  grown: string[];
}

type Opened = { handle: FileHandle; stats: BigIntStats };

/**
 * Objects as plain files under `ROOT/objects/`, one file per key, so an operator can read them with
 * any tool. A write goes to a temporary file in `ROOT/staging/` (same filesystem), is fsynced, then
 * renamed over the target and its folder fsynced: a reader sees the old bytes or the new, never
 * part, and an acknowledged write survives a crash. Etags are the MD5 of the bytes, as S3 gives
 * for a plain PUT, cached by inode, size and times so a stat does not re-read an unchanged file.
 *
 * One process per root (`ROOT/service.lock`): Storage serializes each scope's writes in-process,
 * and that is what keeps conditional writes and quotas exact here, so the backend checks no
 * condition itself.
 */
export class FilesystemBackend implements StorageBackend {
  readonly kind = "filesystem";
  readonly #objects: string;
  readonly #staging: string;
  readonly #lock: string;
  readonly #etags = new Map<string, CachedEtag>();

  private constructor(root: string) {
    this.#objects = join(root, "objects");
    this.#staging = join(root, "staging");
    this.#lock = join(root, "service.lock");
  }

  /** Make the folders, take the root's lock, and drop temporary files of writes that never finished. */
  static async open(root: string): Promise<FilesystemBackend> {
    const backend = new FilesystemBackend(root);
    await mkdir(backend.#objects, { recursive: true });
    await backend.#takeLock();
    await rm(backend.#staging, { recursive: true, force: true });
    await mkdir(backend.#staging);
    return backend;
  }

  async #takeLock(): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(this.#lock, "wx", 0o600);
        await handle.writeFile(String(process.pid));
        await handle.close();
        return;
      } catch (error) {
        if (errorCode(error) !== "EEXIST") throw error;
      }
      const holder = Number((await readFile(this.#lock, "utf8").catch(() => "")).trim());
      if (Number.isInteger(holder) && holder > 0 && processIsAlive(holder)) {
        throw new Error(
          `another storage service (pid ${holder}) uses this root; run one service per root, ` +
            "since conditional writes and quotas are kept exact inside one process " +
            "(if no service runs there, delete service.lock in the root)",
        );
      }
      // the holder died without cleaning up: its lock is stale
      await unlink(this.#lock).catch(() => undefined);
    }
    throw new Error("could not take the root's lock file service.lock");
  }

  async close(): Promise<void> {
    await unlink(this.#lock).catch(() => undefined);
  }

  /**
   * Walk the key's folders with lstat, refusing a symbolic link anywhere on the way, so no path
   * reaches outside the root even if someone put a link inside it. With `create`, make the missing
   * folders; without, `undefined` when one is missing.
   */
  async #locate(scope: string, path: string, create: boolean): Promise<Outcome<Located | undefined>> {
    const segments = `${scope}${path}`.split("/");
    const name = segments.pop() as string;
    let dir = this.#objects;
    let key = "";
    const grown: string[] = [];
    for (const segment of segments) {
      const next = join(dir, segment);
      key += `${segment}/`;
      let stats = await lstatOrUndefined(next);
      if (!stats) {
        if (!create) return ok(undefined);
        try {
          await mkdir(next);
          grown.push(dir);
        } catch (error) {
          if (errorCode(error) !== "EEXIST") throw error;
          // made meanwhile by a writer of another scope: judge what it is like any other entry
          stats = await lstat(next);
        }
      }
      if (stats?.isSymbolicLink()) return fail("symlink_refused", symlinkMessage(path));
      if (stats && !stats.isDirectory()) {
        const folder = key.slice(scope.length, -1);
        return fail("path_conflict", `${folder} is a file, so it cannot hold ${path}`);
      }
      dir = next;
    }
    return ok({ file: join(dir, name), dir, grown });
  }

  async stat(scope: string, path: string): Promise<Outcome<ObjectInfo | undefined>> {
    const located = await this.#locate(scope, path, false);
    if (!located.ok || !located.value) return located as Outcome<undefined>;
    return this.#infoAt(path, located.value.file);
  }

  /**
   * The facts of a file whose folders are already checked: one lstat when its etag is cached, and
   * an open (never following a link) to hash it when not.
   */
  async #infoAt(path: string, file: string): Promise<Outcome<ObjectInfo | undefined>> {
    const stats = await lstatOrUndefined(file, true);
    if (stats?.isSymbolicLink()) return fail("symlink_refused", symlinkMessage(path));
    if (!stats?.isFile()) return ok(undefined);
    const etag = this.#cachedEtag(file, stats);
    if (etag !== undefined) return ok(toInfo(path, stats, etag));
    return this.#withOpenFile(path, file, (opened) => this.#info(path, file, opened));
  }

  async read(
    scope: string,
    path: string,
    range: ByteRange,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer } | undefined>> {
    const located = await this.#locate(scope, path, false);
    if (!located.ok || !located.value) return located as Outcome<undefined>;
    const { file } = located.value;
    return this.#withOpenFile(path, file, async (opened) => {
      // the handle pins this version of the file: a rename over it does not change what we read
      const info = await this.#info(path, file, opened);
      const length = Math.max(0, Math.min(range.length, info.size - range.offset));
      const data = Buffer.alloc(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await opened.handle.read(data, filled, length - filled, range.offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return { info, data: data.subarray(0, filled) };
    });
  }

  /** Run `use` on the open file; `undefined` when there is none (or a folder stands there). */
  async #withOpenFile<T>(
    path: string,
    file: string,
    use: (opened: Opened) => Promise<T>,
  ): Promise<Outcome<T | undefined>> {
    let handle: FileHandle;
    try {
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (isMissing(error)) return ok(undefined);
      if (errorCode(error) === "ELOOP") return fail("symlink_refused", symlinkMessage(path));
      throw error;
    }
    try {
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile()) return ok(undefined);
      return ok(await use({ handle, stats }));
    } finally {
      await handle.close();
    }
  }

  async #info(path: string, file: string, { handle, stats }: Opened): Promise<ObjectInfo> {
    const etag = this.#cachedEtag(file, stats) ?? (await hashHandle(handle));
    this.#remember(file, stats, etag);
    return toInfo(path, stats, etag);
  }

  /** The etag hashed earlier, if the file is still the same inode with the same size and times. */
  #cachedEtag(file: string, stats: BigIntStats): string | undefined {
    const cached = this.#etags.get(file);
    const fresh =
      cached &&
      cached.ino === stats.ino &&
      cached.size === stats.size &&
      cached.mtimeNs === stats.mtimeNs &&
      cached.ctimeNs === stats.ctimeNs;
    return fresh ? cached.etag : undefined;
  }

  #remember(file: string, stats: BigIntStats, etag: string): void {
    this.#etags.delete(file);
    this.#etags.set(file, {
      ino: stats.ino,
      size: stats.size,
      mtimeNs: stats.mtimeNs,
      ctimeNs: stats.ctimeNs,
      etag,
    });
    // a Map keeps insertion order, and a hit re-inserts: the first key is the least recently used
    if (this.#etags.size > ETAG_CACHE_ENTRIES) this.#etags.delete(this.#etags.keys().next().value as string);
  }

  async write(scope: string, path: string, data: Buffer): Promise<Outcome<ObjectInfo>> {
    const temp = join(this.#staging, `${randomBytes(12).toString("hex")}.tmp`);
    let renamed = false;
    try {
      const handle = await open(temp, "wx", 0o600);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      for (let attempt = 1; ; attempt++) {
        const located = await this.#locate(scope, path, true);
        if (!located.ok) return located;
        const { file, dir, grown } = located.value as Located;
        const existing = await lstatOrUndefined(file);
        if (existing?.isSymbolicLink()) return fail("symlink_refused", symlinkMessage(path));
        if (existing?.isDirectory()) {
          return fail(
            "path_conflict",
            `${path} is a folder (it holds other files), so it cannot be a file too`,
          );
        }
        try {
          await rename(temp, file);
        } catch (error) {
          if (isMissing(error) && attempt < RENAME_ATTEMPTS) continue;
          throw error;
        }
        renamed = true;
        for (const folder of new Set([dir, ...grown])) await fsyncFolder(folder);
        const stats = await lstat(file, { bigint: true });
        const etag = createHash("md5").update(data).digest("hex");
        this.#remember(file, stats, etag);
        return ok(toInfo(path, stats, etag));
      }
    } finally {
      if (!renamed) await unlink(temp).catch(() => undefined);
    }
  }

  async delete(scope: string, path: string): Promise<Outcome<boolean>> {
    const located = await this.#locate(scope, path, false);
    if (!located.ok) return located;
    if (!located.value) return ok(false);
    const { file, dir } = located.value;
    const stats = await lstatOrUndefined(file);
    if (!stats || stats.isDirectory()) return ok(false);
    if (stats.isSymbolicLink()) return fail("symlink_refused", symlinkMessage(path));
    await unlink(file);
    this.#etags.delete(file);
    await fsyncFolder(dir);
    await this.#pruneEmptyFolders(dir);
    return ok(true);
  }

  /** Remove folders left empty, so that a deleted folder's name can become a file again. */
  async #pruneEmptyFolders(dir: string): Promise<void> {
    let current = dir;
    while (current.length > this.#objects.length && current.startsWith(this.#objects)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty, or already gone: either way the walk up ends here
      }
      current = join(current, "..");
    }
  }

  async list(scope: string, prefix: string, startAfter: string, limit: number): Promise<Outcome<ListPage>> {
    const folder = prefix.slice(0, prefix.lastIndexOf("/") + 1);
    // locate a name inside the folder to get the folder itself checked for links
    const located = await this.#locate(scope, `${folder}_`, false);
    // a file where the prefix needs a folder: nothing is under it, as an object store would say
    if (!located.ok && located.error.code === "path_conflict") return ok({ objects: [], truncated: false });
    if (!located.ok) return located;
    const files: Found[] = [];
    if (located.value) await collect(located.value.dir, folder, prefix, startAfter, files);
    files.sort((a, b) => Buffer.compare(a.key, b.key));
    // a file deleted since its folder was read is skipped: one more than the page is looked at, so
    // that a page cut short by a deletion still says whether more follow
    const page = files.slice(0, limit + 1);
    const facts = await Promise.all(page.map(({ path, file }) => this.#infoAt(path, file)));
    const objects = facts.flatMap((info) => (info.ok && info.value ? [info.value] : []));
    return ok({
      objects: objects.slice(0, limit),
      truncated: objects.length > limit || files.length > page.length,
    });
  }

  async usage(scope: string): Promise<Usage> {
    const located = await this.#locate(scope, "_", false);
    const usage = { bytes: 0, objects: 0 };
    if (!located.ok || !located.value) return usage;
    const files: Found[] = [];
    await collect(located.value.dir, "", "", "", files);
    for (const { file } of files) {
      const stats = await lstatOrUndefined(file);
      if (stats?.isFile()) {
        usage.bytes += stats.size;
        usage.objects += 1;
      }
    }
    return usage;
  }
}

/** A file found by walking a checked folder: its path in the scope, its UTF-8 key, and where it is. */
interface Found {
  path: string;
  key: Buffer;
  file: string;
}

/** The regular files under `dir` that match; links and other odd entries are skipped. */
async function collect(
  dir: string,
  dirPath: string,
  prefix: string,
  startAfter: string,
  out: Found[],
): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  for (const entry of entries) {
    const path = dirPath + entry.name;
    if (entry.isDirectory()) {
      const folder = `${path}/`;
      if (folder.startsWith(prefix) || prefix.startsWith(folder)) {
        await collect(join(dir, entry.name), folder, prefix, startAfter, out);
      }
    } else if (entry.isFile() && path.startsWith(prefix) && compareKeys(path, startAfter) > 0) {
      out.push({ path, key: Buffer.from(path), file: join(dir, entry.name) });
    }
  }
}

function toInfo(path: string, stats: BigIntStats, etag: string): ObjectInfo {
  return { path, size: Number(stats.size), etag, modified: new Date(Number(stats.mtimeMs)) };
}

async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = createHash("md5");
  const buffer = Buffer.alloc(HASH_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return hash.digest("hex");
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}

async function fsyncFolder(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined>;
async function lstatOrUndefined(path: string, bigint: true): Promise<BigIntStats | undefined>;
async function lstatOrUndefined(path: string, bigint = false): Promise<Stats | BigIntStats | undefined> {
  try {
    return await lstat(path, { bigint });
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

function symlinkMessage(path: string): string {
  return `${path} goes through a symbolic link, and storage never follows links`;
}
