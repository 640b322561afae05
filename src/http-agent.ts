import { Agent, type Dispatcher, EnvHttpProxyAgent } from "undici";

/**
 * An undici dispatcher for Brain's outgoing requests (tool calls, model calls): through the proxy
 * of HTTPS_PROXY / HTTP_PROXY when one is set, honouring NO_PROXY, and direct otherwise.
 */
export function environmentAgent(options: Agent.Options, env: NodeJS.ProcessEnv = process.env): Dispatcher {
  const httpProxy = env.HTTP_PROXY ?? env.http_proxy;
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy;
  if (!httpProxy && !httpsProxy) return new Agent(options);
  return new EnvHttpProxyAgent({
    ...options,
    ...(httpProxy && { httpProxy }),
    ...(httpsProxy && { httpsProxy }),
    ...((env.NO_PROXY ?? env.no_proxy) !== undefined && { noProxy: env.NO_PROXY ?? env.no_proxy }),
  });
}
