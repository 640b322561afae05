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
            "since conditional writes and quotas are kept exact inside one process",
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
    return this.#withFile(scope, path, (file, opened) => this.#info(path, file, opened));
  }

  async read(
    scope: string,
    path: string,
    range: ByteRange,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer } | undefined>> {
    return this.#withFile(scope, path, async (file, opened) => {
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

  /** Run `use` on the path's open file; `undefined` when there is none (or a folder stands there). */
  async #withFile<T>(
    scope: string,
    path: string,
    use: (file: string, opened: Opened) => Promise<T>,
  ): Promise<Outcome<T | undefined>> {
    const located = await this.#locate(scope, path, false);
    if (!located.ok || !located.value) return located as Outcome<undefined>;
    const { file } = located.value;
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
      return ok(await use(file, { handle, stats }));
    } finally {
      await handle.close();
    }
  }

  async #info(path: string, file: string, { handle, stats }: Opened): Promise<ObjectInfo> {
    const cached = this.#etags.get(file);
    const fresh =
      cached &&
      cached.ino === stats.ino &&
      cached.size === stats.size &&
      cached.mtimeNs === stats.mtimeNs &&
      cached.ctimeNs === stats.ctimeNs;
    const etag = fresh ? cached.etag : await hashHandle(handle);
    this.#remember(file, stats, etag);
    return { path, size: Number(stats.size), etag, modified: new Date(Number(stats.mtimeMs)) };
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
        return ok({ path, size: data.length, etag, modified: new Date(Number(stats.mtimeMs)) });
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
    // locate a name inside the folder to get the folder itself checked for links and conflicts
    const located = await this.#locate(scope, `${folder}_`, false);
    if (!located.ok) return located;
    const paths: string[] = [];
    if (located.value) await collect(located.value.dir, folder, prefix, startAfter, paths);
    paths.sort(compareKeys);
    const objects: ObjectInfo[] = [];
    for (const path of paths) {
      if (objects.length === limit) return ok({ objects, truncated: true });
      // a file deleted since its folder was read is skipped, not an error
      const info = await this.stat(scope, path);
      if (info.ok && info.value) objects.push(info.value);
    }
    return ok({ objects, truncated: false });
  }

  async usage(scope: string): Promise<Usage> {
    const located = await this.#locate(scope, "_", false);
    const usage = { bytes: 0, objects: 0 };
    if (!located.ok || !located.value) return usage;
    const paths: string[] = [];
    await collect(located.value.dir, "", "", "", paths);
    for (const path of paths) {
      const stats = await lstatOrUndefined(join(located.value.dir, path));
      if (stats?.isFile()) {
        usage.bytes += stats.size;
        usage.objects += 1;
      }
    }
    return usage;
  }
}

/** Paths of the regular files under `dir` that match; links and other odd entries are skipped. */
async function collect(
  dir: string,
  dirPath: string,
  prefix: string,
  startAfter: string,
  out: string[],
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
      out.push(path);
    }
  }
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

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
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
