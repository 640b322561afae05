import { fetch as undiciFetch } from "undici";
import { environmentAgent } from "../http-agent.js";

/**
 * The fetch a provider's SDK sends with. Node's own fetch gives up on response headers after 300 s
 * and on a silent body after 300 s, which would cut `timeout_seconds` short above that; here those
 * limits are off, because each attempt is bounded by `timeout_seconds` of silence itself
 * (streamed-attempt.ts), which also says what happened in its error. Through the environment's
 * proxy, as tool calls are.
 */
export function providerFetch(env?: NodeJS.ProcessEnv): typeof globalThis.fetch {
  const dispatcher = environmentAgent({ headersTimeout: 0, bodyTimeout: 0 }, env);
  return ((input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) =>
    undiciFetch(input, { ...init, dispatcher })) as unknown as typeof globalThis.fetch;
}
