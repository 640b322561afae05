import pino, { type DestinationStream, type Logger } from "pino";
import { logOptions } from "../../runtime/log-redaction.js";

export type { Logger };

/**
 * Brain's logger: JSON lines. Secrets are Secret objects that serialize as "[redacted]", and every
 * field named like a secret (runtime/log-redaction.ts) is redacted at any depth, in an SDK's or
 * undici's error as in Brain's own fields. A collector's headers, OTEL_EXPORTER_OTLP_HEADERS, are
 * never logged at all.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(logOptions("brain", level), destination ?? pino.destination({ dest: 1, sync: false }));
}
