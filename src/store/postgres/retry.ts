import { StoreUnavailableError } from "../store.js";

// the socket's, and PostgreSQL's own: class 08 (connection exception), 57P01-03 (shutting down,
// crashed, starting up)
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i;

/** Whether an error says the server could not be reached, rather than that it refused the query. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (
    typeof code === "string" &&
    (CONNECTION_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code))
  ) {
    return true;
  }
  return error instanceof Error && CONNECTION_MESSAGES.test(error.message);
}

const FIRST_WAIT_MS = 50;
const MAX_WAIT_MS = 1000;

/**
 * Run `attempt` again while the server cannot be reached, for at most `withinMs`; then a
 * StoreUnavailableError. Only for what is safe to run twice: reads, and appends that carry their
 * own id. Any other error is the query's own, and goes up at once.
 */
export async function whileReachable<T>(attempt: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      if (Date.now() + wait > deadline) {
        throw new StoreUnavailableError("PostgreSQL cannot be reached; nothing was lost, try again", {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, MAX_WAIT_MS);
    }
  }
}
