import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * Brain's logger: JSON lines. Secrets are Secret objects that serialize as "[redacted]", and the
 * redact paths catch the header and body fields that carry tokens if one is ever logged whole (a
 * collector's headers, OTEL_EXPORTER_OTLP_HEADERS, are never logged at all).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "brain" },
      redact: {
        paths: [
          "authorization",
          "*.authorization",
          "headers.authorization",
          "*.headers.authorization",
          "inspection_token",
          "*.inspection_token",
          "token",
          "*.token",
          "api_key",
          "*.api_key",
          "password",
          "*.password",
          "secret",
          "*.secret",
          "headers.cookie",
          "*.headers.cookie",
          'headers["proxy-authorization"]',
          '*.headers["proxy-authorization"]',
          'headers["x-api-key"]',
          '*.headers["x-api-key"]',
        ],
        censor: "[redacted]",
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
