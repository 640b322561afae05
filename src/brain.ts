import type { AddressInfo } from "node:net";
import type { DestinationStream } from "pino";
import { validateResultObject } from "../protocol/result.js";
import { compileNow } from "../protocol/validation.js";
import { Authenticator } from "./api/auth.js";
import { TenantRateLimits } from "./api/rate-limits.js";
import { Router } from "./api/router.js";
import { createRoutes } from "./api/routes.js";
import { createApiServer } from "./api/server.js";
import type { BrainConfig } from "./config/load.js";
import { EventLog } from "./events/event-log.js";
import { createModelProvider } from "./models/registry.js";
import { SessionDirectory } from "./sessions/directory.js";
import { openBackend } from "./store/backend.js";
import type { Store } from "./store/store.js";
import { createLogger, type Logger } from "./telemetry/logger.js";
import { createMetrics } from "./telemetry/metrics.js";
import { createTracing } from "./telemetry/tracing.js";
import { ToolDispatcher } from "./tools/dispatch.js";
import { TurnSupervisor } from "./turns/supervisor.js";

export interface StartOptions {
  /** Where log lines go (tests capture them); stdout by default. */
  logDestination?: DestinationStream;
  /** Environment for the proxy variables of tool and model calls; process.env by default. */
  env?: NodeJS.ProcessEnv;
  sseKeepAliveMs?: number;
  /** How long an SSE client may read nothing of the history before it is dropped; 60 s by default. */
  sseHistoryStallMs?: number;
  /**
   * Opens the embedded store instead of Brain's SqliteStore at the config's path (embedders, fault
   * tests); Brain closes it when it stops.
   */
  openStore?: (path: string) => Store;
}

export interface RunningBrain {
  url: string;
  logger: Logger;
  sessions: SessionDirectory;
  turns: TurnSupervisor;
  store: Store;
  close: () => Promise<void>;
}

/**
 * How long an interrupt or a close waits for a turn to end. A turn ends within moments of being
 * asked (its model call and tool requests are aborted); this bounds a stuck one.
 */
const STOP_WAIT_MS = 10_000;

/** Start Brain: open the store, end what a previous run left running, then serve the API. */
export async function startBrain(config: BrainConfig, options: StartOptions = {}): Promise<RunningBrain> {
  const logger = createLogger(config.logLevel, options.logDestination);
  const metrics = createMetrics();
  const tracing = createTracing(config.tracing, logger);
  const backend = await openBackend(config.store, {
    logger,
    ...(options.openStore && { openStore: options.openStore }),
  });
  const { store, bus, inspection } = backend;
  // before anyone waits, rather than at the first tool call: about 50 ms
  compileNow(validateResultObject);
  const log = new EventLog(store, bus, metrics);
  const dispatcher = new ToolDispatcher({
    headersTimeoutMs: Math.round(config.limits.tool_headers_timeout_seconds * 1000),
    maxProgressBytes: config.limits.max_progress_bytes,
    ...(options.env && { env: options.env }),
  });
  const providerOptions = { logger, ...(options.env && { env: options.env }) };
  const providers = new Map(
    await Promise.all(
      [...config.models].map(
        async ([name, entry]) => [name, await createModelProvider(entry, providerOptions)] as const,
      ),
    ),
  );
  let publicUrl = config.publicUrl;
  const turns = new TurnSupervisor({
    config,
    store,
    log,
    bus,
    leases: backend.leases,
    dispatcher,
    providers,
    inspectionFor: async (session, leaseToken) => {
      const grant = await inspection.issue(session.tenant_id, session.id, leaseToken);
      return { token: grant.token, brainUrl: publicUrl ?? "", release: grant.release };
    },
    logger,
    metrics,
    tracing,
    stopWaitMs: STOP_WAIT_MS,
    takeoverEveryMs: backend.takeoverEveryMs,
  });
  metrics.readings.leasesHeld = () => turns.runningTurns();
  const sessions = new SessionDirectory({ config, store, log, turns });
  const recovered = await turns.recover();
  if (recovered > 0) logger.warn({ sessions: recovered }, "ended turns a previous run left running");

  const router = new Router(
    createRoutes({
      config,
      sessions,
      turns,
      store,
      bus,
      metrics,
      sseKeepAliveMs: options.sseKeepAliveMs ?? 15_000,
      sseHistoryStallMs: options.sseHistoryStallMs ?? 60_000,
    }),
  );
  const server = createApiServer({
    router,
    auth: new Authenticator(config.tenants),
    rateLimits: new TenantRateLimits(config.tenants),
    inspection,
    logger,
    metrics,
    requestTimeoutMs: Math.round(config.limits.request_timeout_seconds * 1000),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.listen.port, config.listen.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  publicUrl ??= url;
  turns.watchForOwnerlessTurns();
  logger.info(
    {
      url,
      ...backend.location,
      tools: config.tools.size,
      ...(config.tracing && { otlp_url: config.tracing.url }),
    },
    "brain listening",
  );

  return {
    url,
    logger,
    sessions,
    turns,
    store,
    close: async () => {
      await turns.shutdown();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
      await backend.close();
      await tracing.shutdown();
      logger.flush();
    },
  };
}
