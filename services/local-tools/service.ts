import pino, { type DestinationStream, type Logger } from "pino";
import { createServiceLogger, type RunningService, serve } from "../../kit/index.js";
import { ApprovalStore } from "./approvals.js";
import { askApprovalTool } from "./ask-approval.js";
import type { LocalToolsConfig } from "./config.js";
import { echoTool } from "./echo.js";
import { operatorRoutes } from "./operator-api.js";
import { waitTool } from "./wait.js";

export interface RunningLocalTools {
  url: string;
  logger: Logger;
  service: RunningService;
  close(): Promise<void>;
}

/** The local tools service: echo, wait and ask_approval, with the operator page and API beside them. */
export async function startLocalTools(
  config: LocalToolsConfig,
  destination?: DestinationStream,
): Promise<RunningLocalTools> {
  const logger = createServiceLogger(
    "local-tools",
    config.logLevel,
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
  const store = new ApprovalStore(config.storePath);
  let service: RunningService;
  try {
    service = await serve({
      tools: [echoTool, waitTool(config.wait), askApprovalTool(store, config.approvals)],
      token: config.token,
      host: config.host,
      port: config.port,
      keepAliveMs: config.keepAliveMs,
      logger,
      extraRoutes: operatorRoutes(store, config.operatorToken),
    });
  } catch (error) {
    store.close();
    throw error;
  }
  logger.info(
    { operator_page: `${service.url}/operator`, store: config.storePath },
    "operators answer approvals on the page",
  );
  return {
    url: service.url,
    logger,
    service,
    close: async () => {
      await service.close();
      store.close();
    },
  };
}
