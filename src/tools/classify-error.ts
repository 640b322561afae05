import type { ToolBinding } from "../config/load.js";
import { ToolFailure } from "./outcome.js";

// a call's own abort reasons, compared by identity to tell them apart from any other end
export const TIMEOUT = Symbol("timeout");
export const HEADERS_TIMEOUT = Symbol("headers_timeout");
export const CANCELLED = Symbol("cancelled");

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_PRX_TLS",
]);

function cancelled(): ToolFailure {
  return new ToolFailure("cancelled", "the session was interrupted or closed while the call was out");
}

/**
 * Map a thrown error to its outcome (docs/protocol.md#outcomes): our own aborts first, then undici's and the socket's codes.
 * `written` says whether the request went out: a call timed out before it connected never ran.
 */
export function classifyError(
  error: unknown,
  { abortReason, written }: { abortReason: unknown; written: boolean },
  binding: ToolBinding,
): ToolFailure {
  if (abortReason === CANCELLED) {
    // interrupted while it was still connecting: nothing went out, so the tool did not run
    return written
      ? cancelled()
      : ToolFailure.unsent("cancelled", "the session was interrupted or closed before the call was sent");
  }
  if (abortReason === HEADERS_TIMEOUT) {
    return new ToolFailure("headers_timeout", "the tool service sent no response headers in time");
  }
  if (abortReason === TIMEOUT && !written) {
    return new ToolFailure(
      "unreachable",
      `no connection to the tool service within timeout_seconds (${binding.timeoutMs / 1000} s)`,
    );
  }
  if (abortReason === TIMEOUT) {
    return new ToolFailure(
      "timeout",
      `the call did not finish within timeout_seconds (${binding.timeoutMs / 1000} s)`,
    );
  }
  const codes = errorCodes(error);
  // once the request went out, whatever broke the connection broke it under a call that may have run
  const unreachable = !written && codes.find((code) => UNREACHABLE_CODES.has(code) || TLS_CODE.test(code));
  if (unreachable)
    return new ToolFailure("unreachable", `the tool service could not be reached (${unreachable})`);
  if (!written && error instanceof Error && /proxy/i.test(error.message)) {
    return new ToolFailure("unreachable", `the proxy refused to carry the request (${error.message})`);
  }
  return new ToolFailure(
    "connection_lost",
    `the connection was lost after the request was sent (${codes[0] ?? "closed"})`,
  );
}

const TLS_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/;

/** The `code` of an error and of its causes, outermost first. */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
