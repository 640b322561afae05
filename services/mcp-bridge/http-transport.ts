import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * How long a stopping session waits for the server to answer its DELETE. Ending the session is a
 * courtesy the specification asks for; a server that hangs must not hold up an idle sweep or shutdown.
 */
export const END_SESSION_TIMEOUT_MS = 1000;

/**
 * The SDK's Streamable HTTP client transport, knowing which of its POSTs are still unanswered (a
 * session the server forgot is closed only once every call sent on it has heard its 404, so each
 * of them is sent again instead of ending as lost), and ending its session with a bounded DELETE.
 */
export class HttpTransport extends StreamableHTTPClientTransport {
  readonly #sending = new Set<Promise<void>>();

  override send(
    message: JSONRPCMessage | JSONRPCMessage[],
    options?: Parameters<StreamableHTTPClientTransport["send"]>[1],
  ): Promise<void> {
    const sending = super.send(message, options);
    this.#sending.add(sending);
    const sent = () => this.#sending.delete(sending);
    sending.then(sent, sent);
    return sending;
  }

  /** Until every POST sent so far was answered, or `ms` passed. */
  answered(ms: number): Promise<void> {
    return within(ms, Promise.allSettled([...this.#sending]));
  }

  /** Ask the server to end the session, waiting at most `ms`; a 405 (it keeps its sessions) or no answer is fine. */
  endSession(ms: number): Promise<void> {
    return within(
      ms,
      this.terminateSession().catch(() => undefined),
    );
  }
}

async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
