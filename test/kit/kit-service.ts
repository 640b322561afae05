import pino from "pino";
import { request } from "undici";
import { type RunningService, type ServeOptions, serve } from "../../kit/index.js";
import { captureLog } from "../helpers/captured-log.js";

export interface KitService extends RunningService {
  token: string;
  /** Everything the service logged so far. */
  logs: () => string;
}

/** A kit service on a free loopback port with a random token, its logs captured. */
export async function startKitService(options: Omit<ServeOptions, "token">): Promise<KitService> {
  const token = `kit-token-${Math.random().toString(36).slice(2)}${Date.now()}`;
  const log = captureLog();
  const service = await serve({ ...options, token, logger: pino({ level: "debug" }, log.destination) });
  return Object.assign(service, { token, logs: log.text });
}

export const envelope = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  tenant_id: "acme",
  session_id: "ses_test",
  call_id: `call_${Math.random().toString(36).slice(2)}`,
  arguments: args,
  ...extra,
});

/** POST a tool call as Brain does, returning status, headers and the whole body as text. */
export async function postCall(
  url: string,
  body: unknown,
  options: { token?: string; contentType?: string; signal?: AbortSignal; idempotencyKey?: string } = {},
) {
  const headers: Record<string, string> = {
    "content-type": options.contentType ?? "application/json",
    accept: "application/json, text/event-stream",
  };
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await request(url, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(options.signal && { signal: options.signal }),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** The events of an event-stream body, comments included as `{comment}`. */
export function parseEventStream(text: string): ({ event: string; data: unknown } | { comment: string })[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      if (block.startsWith(":")) return { comment: block.slice(1).trim() };
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
      return { event, data: JSON.parse(data) };
    });
}
