import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { ByteRange, Condition, ListPage, ObjectInfo, StorageBackend, Usage } from "./backend.js";
import { normalizeEtag } from "./conditions.js";
import { fail, type Outcome, ok } from "./errors.js";

export interface S3Options {
  bucket: string;
  region: string;
  /** For S3-compatible stores (MinIO, Ceph, R2, a local server); unset means AWS. */
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Every key starts with it, so one bucket can hold other data too; "" or ending in "/". */
  keyPrefix: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  timeoutMs: number;
}

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/**
 * Objects in an S3-compatible bucket, one object per key. Storage checks each condition before
 * calling (which is what a store that ignores conditional requests still gets), and this backend
 * sends it on as `If-Match` / `If-None-Match: *`, so on a store that honours them (AWS S3 does)
 * a writer in another process cannot slip in between the check and the write.
 */
export class S3Backend implements StorageBackend {
  readonly kind = "s3";
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #base: string;

  private constructor(options: S3Options) {
    this.#bucket = options.bucket;
    this.#base = options.keyPrefix;
    this.#client = new S3Client({
      region: options.region,
      ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      requestHandler: { requestTimeout: options.timeoutMs, connectionTimeout: options.timeoutMs },
      // many S3-compatible stores reject the SDK's default trailing checksums; send them only when required
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  /** Connect and check that the bucket is there and readable, so a wrong config fails at start. */
  static async open(options: S3Options): Promise<S3Backend> {
    const backend = new S3Backend(options);
    try {
      await backend.#client.send(new HeadBucketCommand({ Bucket: options.bucket }));
    } catch (error) {
      backend.#client.destroy();
      const code = status(error);
      const why =
        code === 404
          ? "it does not exist: create it first"
          : code === 403 || code === 401
            ? "access was denied: check the credentials and the bucket policy"
            : `the store did not answer (${(error as Error).name})`;
      throw new Error(`S3 bucket ${options.bucket}: ${why}`);
    }
    return backend;
  }

  #key(scope: string, path: string): string {
    return `${this.#base}${scope}${path}`;
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  async stat(scope: string, path: string): Promise<Outcome<ObjectInfo | undefined>> {
    try {
      const head = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(scope, path) }),
      );
      return ok(info(path, head.ContentLength, head.ETag, head.LastModified));
    } catch (error) {
      if (status(error) === 404) return ok(undefined);
      throw error;
    }
  }

  async read(
    scope: string,
    path: string,
    range: ByteRange,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer } | undefined>> {
    // HTTP ranges cannot be empty; an empty read still needs the object's facts
    if (range.length === 0) return this.#emptyRead(scope, path);
    try {
      const response = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(scope, path),
          Range: `bytes=${range.offset}-${range.offset + range.length - 1}`,
        }),
      );
      const bytes = await response.Body?.transformToByteArray();
      let data = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.alloc(0);
      const total = /\/(\d+)$/.exec(response.ContentRange ?? "")?.[1];
      // a store that ignores Range sends the whole object: cut it here
      if (total === undefined) data = data.subarray(range.offset, range.offset + range.length);
      const size = total === undefined ? response.ContentLength : Number(total);
      return ok({ info: info(path, size, response.ETag, response.LastModified), data });
    } catch (error) {
      if (status(error) === 404) return ok(undefined);
      // past the end, or any range of an empty object: the facts alone answer that
      if (status(error) === 416) return this.#emptyRead(scope, path);
      throw error;
    }
  }

  async #emptyRead(
    scope: string,
    path: string,
  ): Promise<Outcome<{ info: ObjectInfo; data: Buffer } | undefined>> {
    const stat = await this.stat(scope, path);
    if (!stat.ok || !stat.value) return stat as Outcome<undefined>;
    return ok({ info: stat.value, data: Buffer.alloc(0) });
  }

  async write(scope: string, path: string, data: Buffer, condition: Condition): Promise<Outcome<ObjectInfo>> {
    const key = this.#key(scope, path);
    let etag: string;
    try {
      const put = await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: data,
          ContentLength: data.length,
          ...conditionHeaders(condition),
        }),
      );
      etag = normalizeEtag(put.ETag ?? "");
    } catch (error) {
      const refused = preconditionRefusal(path, error);
      if (refused) return refused;
      throw error;
    }
    // the object is stored now: a HEAD that fails or finds a newer writer's object must not undo that
    const after = await this.stat(scope, path).catch(() => undefined);
    const modified = after?.ok && after.value?.etag === etag ? after.value.modified : new Date();
    return ok({ path, size: data.length, etag, modified });
  }

  async delete(scope: string, path: string, condition: Condition): Promise<Outcome<boolean>> {
    try {
      await this.#client.send(
        new DeleteObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(scope, path),
          ...(condition.ifMatch !== undefined && { IfMatch: `"${normalizeEtag(condition.ifMatch)}"` }),
        }),
      );
      return ok(true);
    } catch (error) {
      if (status(error) === 404) return ok(false);
      const refused = preconditionRefusal(path, error);
      if (refused) return refused;
      throw error;
    }
  }

  async list(scope: string, prefix: string, startAfter: string, limit: number): Promise<Outcome<ListPage>> {
    const base = this.#key(scope, "");
    const page = await this.#client.send(
      new ListObjectsV2Command({
        Bucket: this.#bucket,
        Prefix: base + prefix,
        ...(startAfter !== "" && { StartAfter: base + startAfter }),
        MaxKeys: limit,
      }),
    );
    const objects = (page.Contents ?? []).map((entry) =>
      info((entry.Key ?? "").slice(base.length), entry.Size, entry.ETag, entry.LastModified),
    );
    return ok({ objects, truncated: page.IsTruncated === true });
  }

  async usage(scope: string): Promise<Usage> {
    const usage = { bytes: 0, objects: 0 };
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: this.#key(scope, ""),
          ContinuationToken: token,
        }),
      );
      for (const entry of page.Contents ?? []) {
        usage.bytes += entry.Size ?? 0;
        usage.objects += 1;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return usage;
  }
}

function info(
  path: string,
  size: number | undefined,
  etag: string | undefined,
  modified: Date | undefined,
): ObjectInfo {
  return { path, size: size ?? 0, etag: normalizeEtag(etag ?? ""), modified: modified ?? new Date(0) };
}

function conditionHeaders(condition: Condition): { IfMatch?: string; IfNoneMatch?: string } {
  if (condition.ifNoneMatch) return { IfNoneMatch: "*" };
  if (condition.ifMatch !== undefined) return { IfMatch: `"${normalizeEtag(condition.ifMatch)}"` };
  return {};
}

/** 412 is a failed condition; 409 is S3's answer when a concurrent conditional write won the race. */
function preconditionRefusal(path: string, error: unknown): Outcome<never> | undefined {
  const code = status(error);
  if (code !== 412 && code !== 409) return undefined;
  return fail(
    "precondition_failed",
    `${path} was changed by another writer at the same moment; nothing was changed`,
  );
}
