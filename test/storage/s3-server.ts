import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startProcess } from "../helpers/processes.js";

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** s3rver's fixed credentials; it checks request signatures against them. */
  accessKeyId: string;
  secretAccessKey: string;
  stop: () => Promise<void>;
}

/** A real S3-compatible server (s3rver, from the npm registry) in a child process on a free port. */
export async function startS3Server(bucket = "brain-storage"): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const started = await startProcess(
    ["--openssl-legacy-provider", "test/storage/s3rver-main.mjs", directory, bucket],
    {},
    (line) => /s3rver listening on (\S+)/.exec(line)?.[1],
  );
  return {
    endpoint: started.ready,
    bucket,
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    stop: async () => {
      await started.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The storage service's `backend` config for this server; `endpoint` points it elsewhere (at a
 * forward in front of the server), `bucket` at a bucket that may not exist.
 */
export function s3BackendConfig(s3: S3Server, overrides: { endpoint?: string; bucket?: string } = {}) {
  return {
    kind: "s3",
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    key_prefix: "brain/",
    access_key_id_env: "S3_KEY_ID",
    secret_access_key_env: "S3_SECRET",
    timeout_seconds: 2,
    ...overrides,
  };
}

/** The environment variables s3BackendConfig names, holding the server's credentials. */
export const s3Env = (s3: S3Server) => ({ S3_KEY_ID: s3.accessKeyId, S3_SECRET: s3.secretAccessKey });
