import type { Logger } from "pino";
import { Agent } from "undici";
import { createServiceLogger, serve } from "../../kit/index.js";
import { HostList } from "./address-policy.js";
import { ResultCache } from "./cache.js";
import type { SearchConfig, WebConfig } from "./config.js";
import { PageFetcher } from "./fetch-page.js";
import { type FetchStructured, fetchTool } from "./fetch-tool.js";
import { guardedAgent } from "./guarded-agent.js";
import type { Cached } from "./results.js";
import { braveProvider } from "./search/brave.js";
import type { SearchProvider } from "./search/provider.js";
import { searxngProvider } from "./search/searxng.js";
import { tavilyProvider } from "./search/tavily.js";
import { type SearchStructured, searchTool } from "./search-tool.js";

export interface RunningWebService {
  /** `http://host:port`; the tools answer at `{url}/tools/{name}`. */
  url: string;
  logger: Logger;
  /** Stop serving (in-flight calls get their signal), then close every connection to the web. */
  close(): Promise<void>;
}

function providerFor(search: SearchConfig, dispatcher: Agent): SearchProvider {
  if (search.provider === "brave") return braveProvider(search, dispatcher);
  if (search.provider === "tavily") return tavilyProvider(search, dispatcher);
  return searxngProvider(search, dispatcher);
}

/**
 * Serve web_fetch, and web_search when the config names a provider. Pages are fetched through the
 * guarded Agent; the provider, which the operator chose, through a plain one (a self-hosted
 * SearXNG usually sits at a private address).
 */
export async function startWebService(
  config: WebConfig,
  options: { logger?: Logger } = {},
): Promise<RunningWebService> {
  const logger = options.logger ?? createServiceLogger("web", config.logLevel);
  const pages = guardedAgent(
    { allow: new HostList(config.hosts.allow), deny: new HostList(config.hosts.deny) },
    config.fetch.connectTimeoutMs,
  );
  const providers = new Agent({ connect: { timeout: config.fetch.connectTimeoutMs } });
  const fetcher = new PageFetcher(pages, new HostList(config.hosts.deny), config.fetch);
  const { ttlMs, maxEntries } = config.cache;
  const tools = [
    fetchTool(fetcher, config.fetch, new ResultCache<Cached<FetchStructured>>(ttlMs, maxEntries)),
  ];
  if (config.search) {
    const provider = providerFor(config.search, providers);
    tools.unshift(
      searchTool(
        provider,
        config.search.timeoutMs,
        new ResultCache<Cached<SearchStructured>>(ttlMs, maxEntries),
      ),
    );
  }
  const service = await serve({
    tools,
    token: config.token.reveal(),
    host: config.listen.host,
    port: config.listen.port,
    logger,
    name: "web",
  }).catch(async (error) => {
    await Promise.all([pages.close(), providers.close()]);
    throw error;
  });
  logger.info(
    { search: config.search?.provider ?? "none", robots_txt: config.fetch.respectRobotsTxt },
    "web ready",
  );
  return {
    url: service.url,
    logger,
    close: async () => {
      await service.close();
      await Promise.all([pages.destroy(), providers.destroy()]);
    },
  };
}
