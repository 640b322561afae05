import type { Condition, ObjectInfo, StorageBackend, Usage } from "./backend.js";
import { checkCondition } from "./conditions.js";
import { fail, type Outcome, ok } from "./errors.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { normalizePath, normalizePrefix } from "./paths.js";

export interface StorageLimits {
  /** The largest object a write may store. */
  maxObjectBytes: number;
  /** The most bytes one read returns; larger objects are read in ranges. */
  maxReadBytes: number;
  /** Per scope: the total bytes of its objects… */
  quotaBytes: number;
  /** …and how many objects it may hold. */
  quotaObjects: number;
  /** The most objects one list page holds. */
  maxListLimit: number;
}

export const DEFAULT_LIST_LIMIT = 100;

export interface ReadRequest {
  offset?: number;
  length?: number;
}

export interface ListRequest {
  prefix?: string;
  cursor?: string;
  limit?: number;
}

export interface ListResult {
  objects: ObjectInfo[];
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  nextCursor: string | undefined;
}

// usage is cached per scope; past this many scopes the least recently used is recounted when next needed
const USAGE_CACHE_ENTRIES = 10_000;

/**
 * The rules every backend shares: path and prefix checks, conditions, quotas, read limits and list
 * paging. A scope's writes and deletes run one at a time, so a condition checked here still holds
 * when the backend writes and each scope's usage is exact. Usage is counted from the backend the
 * first time a scope is used, then kept up to date by each write and delete.
 */
export class Storage {
  readonly #mutex = new KeyedMutex();
  readonly #usage = new Map<string, Usage>();

  constructor(
    readonly backend: StorageBackend,
    readonly limits: StorageLimits,
  ) {}

  async write(
    scope: string,
    rawPath: string,
    data: Buffer,
    condition: Condition,
  ): Promise<Outcome<ObjectInfo & { created: boolean }>> {
    const path = normalizePath(rawPath);
    if (!path.ok) return path;
    if (condition.ifMatch !== undefined && condition.ifNoneMatch) {
      return fail(
        "invalid_argument",
        "give if_match or if_none_match, not both: together they can never hold",
      );
    }
    if (data.length > this.limits.maxObjectBytes) {
      return fail(
        "too_large",
        `${path.value} would be ${data.length} bytes; objects are at most ${this.limits.maxObjectBytes} bytes`,
        { size: data.length, max_object_bytes: this.limits.maxObjectBytes },
      );
    }
    return this.#exclusive(scope, async () => {
      const current = await this.backend.stat(scope, path.value);
      if (!current.ok) return current;
      const allowed = checkCondition(path.value, current.value, condition);
      if (!allowed.ok) return allowed;
      const usage = await this.#usageOf(scope);
      const previous = current.value?.size ?? 0;
      const next = {
        bytes: usage.bytes - previous + data.length,
        objects: usage.objects + (current.value ? 0 : 1),
      };
      // shrinking an object is always allowed, so a scope over a lowered quota can still tidy up
      if (data.length > previous && next.bytes > this.limits.quotaBytes) {
        return fail(
          "quota_exceeded",
          `writing ${path.value} (${data.length} bytes) would use ${next.bytes} of this storage's ${this.limits.quotaBytes} bytes; delete files to make room`,
          { used_bytes: usage.bytes, quota_bytes: this.limits.quotaBytes },
        );
      }
      // only a new object counts against the object quota: a replacement adds none
      if (!current.value && next.objects > this.limits.quotaObjects) {
        return fail(
          "quota_exceeded",
          `this storage already holds ${usage.objects} files, its limit; delete files to make room`,
          { used_objects: usage.objects, quota_objects: this.limits.quotaObjects },
        );
      }
      const written = await this.backend.write(scope, path.value, data, condition);
      if (!written.ok) return written;
      this.#usage.set(scope, next);
      return ok({ ...written.value, created: current.value === undefined });
    });
  }

  async read(
    scope: string,
    rawPath: string,
    request: ReadRequest,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer; offset: number }>> {
    const path = normalizePath(rawPath);
    if (!path.ok) return path;
    const max = this.limits.maxReadBytes;
    if (request.length !== undefined && request.length > max) {
      return fail(
        "range_too_large",
        `length ${request.length} is over the ${max} bytes one read may return`,
        {
          max_read_bytes: max,
        },
      );
    }
    const offset = request.offset ?? 0;
    const read = await this.backend.read(scope, path.value, { offset, length: request.length ?? max });
    if (!read.ok) return read;
    if (!read.value) return notFound(path.value);
    const { info, data } = read.value;
    if (offset > info.size) {
      return fail("invalid_range", `offset ${offset} is past the end of ${path.value} (${info.size} bytes)`, {
        size: info.size,
      });
    }
    if (request.length === undefined && info.size - offset > max) {
      return fail(
        "range_too_large",
        `${path.value} has ${info.size - offset} bytes from offset ${offset}, over the ${max} bytes one read may return; read it in parts with offset and length`,
        { size: info.size, max_read_bytes: max },
      );
    }
    return ok({ info, data, offset });
  }

  async stat(scope: string, rawPath: string): Promise<Outcome<ObjectInfo>> {
    const path = normalizePath(rawPath);
    if (!path.ok) return path;
    const stat = await this.backend.stat(scope, path.value);
    if (!stat.ok) return stat;
    return stat.value ? ok(stat.value) : notFound(path.value);
  }

  async delete(scope: string, rawPath: string, condition: Condition): Promise<Outcome<ObjectInfo>> {
    const path = normalizePath(rawPath);
    if (!path.ok) return path;
    return this.#exclusive(scope, async () => {
      const current = await this.backend.stat(scope, path.value);
      if (!current.ok) return current;
      if (!current.value) return notFound(path.value);
      const allowed = checkCondition(path.value, current.value, condition);
      if (!allowed.ok) return allowed;
      const deleted = await this.backend.delete(scope, path.value, condition);
      if (!deleted.ok) return deleted;
      const usage = this.#usage.get(scope);
      if (usage && deleted.value) {
        this.#usage.set(scope, { bytes: usage.bytes - current.value.size, objects: usage.objects - 1 });
      }
      return ok(current.value);
    });
  }

  async list(scope: string, request: ListRequest): Promise<Outcome<ListResult>> {
    const prefix = normalizePrefix(request.prefix ?? "");
    if (!prefix.ok) return prefix;
    const limit = request.limit ?? Math.min(DEFAULT_LIST_LIMIT, this.limits.maxListLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > this.limits.maxListLimit) {
      return fail("invalid_argument", `limit must be a whole number from 1 to ${this.limits.maxListLimit}`);
    }
    const startAfter = request.cursor === undefined ? "" : decodeCursor(request.cursor);
    if (startAfter === undefined) {
      return fail(
        "invalid_argument",
        "the cursor is not one this service gave out: pass next_cursor exactly as received",
      );
    }
    const page = await this.backend.list(scope, prefix.value, startAfter, limit);
    if (!page.ok) return page;
    const last = page.value.objects.at(-1);
    return ok({
      objects: page.value.objects,
      nextCursor: page.value.truncated && last ? encodeCursor(last.path) : undefined,
    });
  }

  /** The scope's usage, counted now; for operators and tests. */
  async usage(scope: string): Promise<Usage> {
    return this.#exclusive(scope, () => this.#usageOf(scope));
  }

  /**
   * Run a scope's mutation alone. When the backend throws, what it did is unknown, and so is the
   * usage: forget it, to be counted again on next use.
   */
  #exclusive<T>(scope: string, task: () => Promise<T>): Promise<T> {
    return this.#mutex.run(scope, async () => {
      try {
        return await task();
      } catch (error) {
        this.#usage.delete(scope);
        throw error;
      }
    });
  }

  async #usageOf(scope: string): Promise<Usage> {
    const cached = this.#usage.get(scope);
    if (cached) {
      // re-insert: the Map's first key is then the scope used longest ago
      this.#usage.delete(scope);
      this.#usage.set(scope, cached);
      return cached;
    }
    const usage = await this.backend.usage(scope);
    this.#usage.set(scope, usage);
    if (this.#usage.size > USAGE_CACHE_ENTRIES) this.#usage.delete(this.#usage.keys().next().value as string);
    return usage;
  }
}

function notFound(path: string): Outcome<never> {
  return fail("not_found", `${path} does not exist; storage_list shows what does`);
}

function encodeCursor(path: string): string {
  return Buffer.from(path, "utf8").toString("base64url");
}

/** The path a cursor stands for; any string is safe as a start point, so only garbage is refused. */
function decodeCursor(cursor: string): string | undefined {
  const path = Buffer.from(cursor, "base64url").toString("utf8");
  return path !== "" && encodeCursor(path) === cursor ? path : undefined;
}
