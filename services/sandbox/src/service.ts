import pino, { type Logger } from "pino";
import { serve } from "../../../kit/index.js";
import type { SandboxConfig } from "./config.js";
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

/** Check the host can sandbox, then serve the sandbox tools. Throws StartupError saying what to fix. */
export async function startSandboxService(
  config: SandboxConfig,
  options: { logger?: Logger } = {},
): Promise<RunningSandboxService> {
  const logger = options.logger ?? pino({ level: config.logLevel, base: { service: "sandbox" } });
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
