import type { Outcome } from "./errors.js";

/** One stored object; `path` is inside its scope. */
export interface ObjectInfo {
  path: string;
  size: number;
  /** Changes whenever the bytes change; unquoted. */
  etag: string;
  modified: Date;
}

export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * A write's or delete's precondition, as the store checked it just before. A backend that can,
 * passes it on to its store too (S3's conditional requests), so that writers in other processes
 * cannot slip in between the check and the write.
 */
export interface Condition {
  ifMatch?: string;
  ifNoneMatch?: boolean;
}

export interface Usage {
  bytes: number;
  objects: number;
}

export interface ListPage {
  /** In UTF-8 byte order of their keys. */
  objects: ObjectInfo[];
  truncated: boolean;
}

/**
 * Where objects live: the filesystem or an S3-compatible object store. Both pass the conformance
 * suite in test/storage/backend-conformance.ts. `scope` is a key prefix ending in "/" made by
 * scopePrefix, and paths and prefixes are already normalized (Storage does both); writes and
 * deletes of one scope arrive one at a time. Refusals are Outcome values, with messages naming
 * paths inside the scope only; a thrown error is a failure of the backend itself (disk, network).
 */
export interface StorageBackend {
  readonly kind: "filesystem" | "s3";
  stat(scope: string, path: string): Promise<Outcome<ObjectInfo | undefined>>;
  /** The bytes of `range`, cut at the end of the object; `undefined` when there is no object. */
  read(
    scope: string,
    path: string,
    range: ByteRange,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer } | undefined>>;
  /** All or nothing: after a failure the old object, or none, is still there whole. */
  write(scope: string, path: string, data: Buffer, condition: Condition): Promise<Outcome<ObjectInfo>>;
  /** `false` when there was no object. */
  delete(scope: string, path: string, condition: Condition): Promise<Outcome<boolean>>;
  /** Objects whose paths start with `prefix` and sort after `startAfter`, at most `limit`. */
  list(scope: string, prefix: string, startAfter: string, limit: number): Promise<Outcome<ListPage>>;
  /** The total size and number of the scope's objects, counted now. */
  usage(scope: string): Promise<Usage>;
  close(): Promise<void>;
}
