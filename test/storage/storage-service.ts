import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { resolveStorageConfig } from "../../services/storage/config.js";
import { type RunningStorageService, startStorageService } from "../../services/storage/service.js";
import { captureLog } from "../helpers/captured-log.js";
import { removedOnFailure } from "../helpers/temp-dir.js";
import { envelope, postCall } from "../kit/kit-service.js";

export interface ToolAnswer {
  status: number;
  is_error: boolean;
  text: string;
  structured: Record<string, unknown>;
  raw: Record<string, unknown>;
}

export interface TestStorage {
  url: string;
  token: string;
  /** The filesystem backend's root (a temporary folder unless the config names another backend). */
  root: string;
  running: RunningStorageService;
  logs: () => string;
  /** POST a tool call as Brain does; the identity defaults to tenant acme, session ses_test. */
  call: (
    tool: string,
    args: Record<string, unknown>,
    identity?: { tenant_id?: string; session_id?: string },
  ) => Promise<ToolAnswer>;
  close: () => Promise<void>;
}

/**
 * The storage service in-process on a free loopback port, with a random token, its logs captured,
 * and a filesystem backend in a temporary folder; `overrides` replace top-level config fields.
 */
export async function startStorage(
  overrides: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<TestStorage> {
  const root = mkdtempSync(join(tmpdir(), "storage-service-"));
  const token = `storage-token-${randomBytes(12).toString("hex")}`;
  const raw = {
    listen: "127.0.0.1:0",
    token_env: "STORAGE_TOKEN",
    backend: { kind: "filesystem", root },
    log_level: "debug",
    ...overrides,
  };
  const resolved = resolveStorageConfig(raw, { STORAGE_TOKEN: token, ...env }, root);
  if (!resolved.ok) throw new Error(`test config invalid:\n${resolved.problems.join("\n")}`);
  const log = captureLog();
  const running = await removedOnFailure(
    root,
    startStorageService(resolved.config, { logger: pino({ level: "debug" }, log.destination) }),
  );
  return {
    url: running.url,
    token,
    root,
    running,
    logs: log.text,
    call: async (tool, args, identity = {}) => {
      const response = await postCall(`${running.url}/tools/${tool}`, envelope(args, identity), { token });
      const raw = response.status === 200 ? (response.json() as Record<string, unknown>) : {};
      const content = (raw.content ?? []) as { text?: string }[];
      return {
        status: response.status,
        is_error: raw.is_error === true,
        text: content.map((item) => item.text ?? "").join("\n"),
        structured: (raw.structured_content ?? {}) as Record<string, unknown>,
        raw,
      };
    },
    close: async () => {
      await running.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The stable code of a refusal. */
export const errorCode = (answer: ToolAnswer) =>
  (answer.structured.error as { code?: string } | undefined)?.code;
