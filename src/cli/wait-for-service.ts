import { connect } from "node:net";

const RETRY_DELAY_MS = 200;
const MAX_WAIT_SECONDS = 3600;

/** `--wait SECONDS` as given (0 when absent), or what is wrong with it. */
export function waitSeconds(raw: string | undefined): number | string {
  const seconds = Number(raw ?? 0);
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_WAIT_SECONDS
    ? seconds
    : `--wait takes seconds from 0 to ${MAX_WAIT_SECONDS}, not ${JSON.stringify(raw)}`;
}

/**
 * Wait while nothing listens at `url`'s host and port yet, for a service that is still starting
 * (the README starts one in the background just before): only a refused connection is retried,
 * for at most `seconds`; anything else will not get better by waiting. Resolves with undefined
 * once a connection is accepted, or with the sentence saying why not.
 */
export async function untilListening(
  url: URL,
  seconds: number,
  say: (line: string) => void,
): Promise<string | undefined> {
  const deadline = Date.now() + seconds * 1000;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  for (let attempt = 0; ; attempt++) {
    const code = await new Promise<string | undefined>((resolve) => {
      const socket = connect({ host, port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    if (code === undefined) return undefined;
    if (code !== "ECONNREFUSED" || Date.now() + RETRY_DELAY_MS > deadline) {
      const waited = attempt > 0 ? ` after ${seconds} s` : "";
      return `cannot reach ${url.href.replace(/\/$/, "")} (${code})${waited}; is the service running?`;
    }
    if (attempt === 0) say(`waiting for ${url.origin} to listen…`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
  }
}
