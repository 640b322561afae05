import pino, { type DestinationStream, type Logger } from "pino";
import { logOptions } from "../runtime/log-redaction.js";

/**
 * A tool service's logger: JSON lines named by `service`, on stdout unless `destination` says
 * otherwise, with every field named like a secret (a bearer token, an API key, a cookie) redacted
 * at any depth, as Brain's own logger does.
 */
export function createServiceLogger(
  service: string,
  level = "info",
  destination?: DestinationStream,
): Logger {
  return pino(logOptions(service, level), destination);
}
