import { randomBytes } from "node:crypto";
import pino from "pino";
import { resolveWebConfig } from "../../services/web/config.js";
import { type RunningWebService, startWebService } from "../../services/web/service.js";
import { captureLog } from "../helpers/captured-log.js";
import { envelope, parseEventStream, postCall } from "../kit/kit-service.js";

export interface WebAnswer {
  status: number;
  is_error: boolean;
  text: string;
  structured: Record<string, unknown>;
  /** The progress events, when the service answered with an event stream. */
  progress: unknown[];
}

export interface TestWeb {
  url: string;
  token: string;
  running: RunningWebService;
  logs: () => string;
  /** POST a tool call as Brain does; the identity defaults to tenant acme, session ses_test. */
  call: (
    tool: string,
    args: Record<string, unknown>,
    identity?: { tenant_id?: string },
    signal?: AbortSignal,
  ) => Promise<WebAnswer>;
  close: () => Promise<void>;
}

/**
 * The web service in-process on a free loopback port with a random token and its logs captured;
 * `config` is merged over a config with no search provider, robots.txt ignored and no cache.
 */
export async function startWeb(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<TestWeb> {
  const token = `web-token-${randomBytes(12).toString("hex")}`;
  const raw = {
    listen: "127.0.0.1:0",
    token_env: "WEB_TOKEN",
    log_level: "debug",
    cache: { ttl_seconds: 0 },
    ...config,
    fetch: { respect_robots_txt: false, ...(config.fetch as object) },
  };
  const resolved = resolveWebConfig(raw, { WEB_TOKEN: token, ...env });
  if (!resolved.ok) throw new Error(`test config invalid:\n${resolved.problems.join("\n")}`);
  const log = captureLog();
  const running = await startWebService(resolved.config, {
    logger: pino({ level: "debug" }, log.destination),
  });
  return {
    url: running.url,
    token,
    running,
    logs: log.text,
    call: async (tool, args, identity = {}, signal) => {
      const response = await postCall(`${running.url}/tools/${tool}`, envelope(args, identity), {
        token,
        ...(signal && { signal }),
      });
      let raw: Record<string, unknown> = {};
      const progress: unknown[] = [];
      if (String(response.headers["content-type"]).startsWith("text/event-stream")) {
        for (const event of parseEventStream(response.text)) {
          if (!("event" in event)) continue;
          if (event.event === "progress") progress.push(event.data);
          if (event.event === "result") raw = event.data as Record<string, unknown>;
        }
      } else if (response.status === 200) raw = response.json();
      const content = (raw.content ?? []) as { text?: string }[];
      return {
        status: response.status,
        is_error: raw.is_error === true,
        text: content.map((item) => item.text ?? "").join("\n"),
        structured: (raw.structured_content ?? {}) as Record<string, unknown>,
        progress,
      };
    },
    close: () => running.close(),
  };
}

/** The stable code of a refusal. */
export const errorCode = (answer: WebAnswer) =>
  (answer.structured.error as { code?: string } | undefined)?.code;
