import type { Logger } from "pino";
import { createServiceLogger, serve } from "../../kit/index.js";
import type { StorageBackend } from "./backend.js";
import type { BackendConfig, StorageConfig } from "./config.js";
import { FilesystemBackend } from "./fs-backend.js";
import { Storage } from "./storage.js";
import { storageTools } from "./tools.js";

export interface RunningStorageService {
  /** `http://host:port`; the tools answer at `{url}/tools/{name}`. */
  url: string;
  storage: Storage;
  logger: Logger;
  /** Stop serving (letting calls finish), then release the backend. */
  close(): Promise<void>;
}

export async function openBackend(config: BackendConfig): Promise<StorageBackend> {
  if (config.kind === "filesystem") return FilesystemBackend.open(config.root);
  // the AWS SDK is large: a filesystem service never loads it
  const { S3Backend } = await import("./s3-backend.js");
  return S3Backend.open({
    bucket: config.bucket,
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    keyPrefix: config.keyPrefix,
    credentials: {
      accessKeyId: config.accessKeyId.reveal(),
      secretAccessKey: config.secretAccessKey.reveal(),
      ...(config.sessionToken && { sessionToken: config.sessionToken.reveal() }),
    },
    timeoutMs: config.timeoutMs,
  });
}

/** Open the backend (failing with what to fix), then serve the storage tools. */
export async function startStorageService(
  config: StorageConfig,
  options: { logger?: Logger } = {},
): Promise<RunningStorageService> {
  const logger = options.logger ?? createServiceLogger("storage", config.logLevel);
  const backend = await openBackend(config.backend);
  const storage = new Storage(backend, config.limits);
  const tools = storageTools(storage, config.scope);
  // room for the largest content after JSON escaping, plus the envelope
  const maxContentLength = 4 * Math.ceil(config.limits.maxObjectBytes / 3);
  let service: Awaited<ReturnType<typeof serve>>;
  try {
    service = await serve({
      tools,
      token: config.token.reveal(),
      host: config.listen.host,
      port: config.listen.port,
      maxBodyBytes: Math.max(1_048_576, 2 * maxContentLength + 65_536),
      logger,
      name: "storage",
    });
  } catch (error) {
    await backend.close();
    throw error;
  }
  logger.info({ backend: backend.kind, scope: config.scope }, "storage ready");
  return {
    url: service.url,
    storage,
    logger,
    close: async () => {
      await service.close();
      await backend.close();
    },
  };
}
