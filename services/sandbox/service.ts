import type { Logger } from "pino";
import { createServiceLogger, serve } from "../../kit/index.js";
import type { Limits, SandboxConfig } from "./config.js";
import { Sandbox } from "./sandbox.js";
import { sandboxTools } from "./tools.js";

export interface RunningSandboxService {
  /** `http://host:port`; the tools answer at `{url}/tools/{name}`. */
  url: string;
  sandbox: Sandbox;
  logger: Logger;
  /** Stop serving, kill every run and job; workspaces stay on disk for the next start. */
  close(): Promise<void>;
}

/**
 * Room for the largest arguments the limits allow (a file as base64, or code with its stdin), each
 * character JSON-escaped at worst (6 bytes), plus the envelope.
 */
export function maxBodyBytes(limits: Limits): number {
  const largest = Math.max(
    Math.ceil((limits.max_write_bytes * 4) / 3),
    limits.max_code_bytes + limits.max_stdin_bytes,
  );
  return 6 * largest + 65_536;
}

/** Check the host can sandbox, then serve the sandbox tools. Throws StartupError saying what to fix. */
export async function startSandboxService(
  config: SandboxConfig,
  options: { logger?: Logger } = {},
): Promise<RunningSandboxService> {
  const logger = options.logger ?? createServiceLogger("sandbox", config.logLevel);
  const sandbox = await Sandbox.open(config, logger);
  let service: Awaited<ReturnType<typeof serve>>;
  try {
    service = await serve({
      tools: sandboxTools(sandbox, [...config.languages.keys()], config.limits),
      token: config.token.reveal(),
      host: config.listen.host,
      port: config.listen.port,
      logger,
      name: "sandbox",
      maxBodyBytes: maxBodyBytes(config.limits),
      maxProgressBytes: config.limits.max_progress_bytes,
    });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return {
    url: service.url,
    sandbox,
    logger,
    close: async () => {
      await service.close();
      await sandbox.close();
    },
  };
}
