import { fail, type Outcome, ok } from "./errors.js";

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;

// C0 controls and DEL: NUL truncates paths in C APIs, the rest only hide what a name really is
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * An object path as the model gives it, checked and normalized to NFC, so "é" composed and
 * decomposed name the same object. Nothing is resolved or repaired: `.`, `..`, empty segments,
 * absolute paths and backslashes are refused, so one object has exactly one spelling and no
 * spelling leaves the scope.
 */
export function normalizePath(raw: string): Outcome<string> {
  if (raw === "") return fail("invalid_path", "the path is empty: name a file, such as notes/todo.md");
  const path = raw.normalize("NFC");
  const problem = segmentProblem(path);
  if (problem) return fail("invalid_path", `path ${JSON.stringify(raw)}: ${problem}`);
  if (path.endsWith("/")) {
    return fail("invalid_path", `path ${JSON.stringify(raw)} ends with "/": name a file, not a folder`);
  }
  return ok(path);
}

/**
 * A list prefix: "" (everything), a folder ("notes/") or the start of a name ("notes/2026-").
 * The same rules as paths, except that it may be empty and end with "/".
 */
export function normalizePrefix(raw: string): Outcome<string> {
  if (raw === "") return ok("");
  const prefix = raw.normalize("NFC");
  const problem = segmentProblem(prefix);
  if (problem) return fail("invalid_path", `prefix ${JSON.stringify(raw)}: ${problem}`);
  return ok(prefix);
}

/** What breaks the path rules, if anything; one trailing "/" (a folder) is left to the caller. */
function segmentProblem(path: string): string | undefined {
  if (path.includes("\u0000")) return "contains a NUL byte";
  if (hasControlCharacter(path)) return "contains a control character";
  if (path.includes("\\")) return 'contains "\\": separate folders with "/"';
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) {
    return "is absolute: give a path inside your storage, such as notes/todo.md";
  }
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  const segments = (path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  for (const segment of segments) {
    if (segment === "") return 'has an empty folder name ("//")';
    if (segment === "." || segment === "..") {
      return `has a "${segment}" segment: paths cannot refer to folders above or beside them`;
    }
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      return `has a name longer than ${MAX_SEGMENT_BYTES} bytes`;
  }
  return undefined;
}

export type ScopeMode = "tenant" | "session";

export interface Identity {
  tenant_id: string;
  session_id: string;
}

/**
 * The key prefix of the caller's scope, built only from the request's top-level identity. Each
 * id is percent-encoded as one segment, and "." and ".." (legal tenant ids) are spelled %2E, so no
 * id can name another scope's folder or climb out of its own.
 */
export function scopePrefix(mode: ScopeMode, identity: Identity): Outcome<string> {
  const tenant = encodeSegment(identity.tenant_id);
  const session = encodeSegment(identity.session_id);
  if (tenant === undefined || session === undefined) {
    return fail("invalid_argument", `tenant_id and session_id must be 1 to ${MAX_ID_BYTES} bytes`);
  }
  return ok(mode === "tenant" ? `tenants/${tenant}/` : `sessions/${tenant}/${session}/`);
}

// an encoded id must fit one filesystem name
const MAX_ID_BYTES = 80;

function encodeSegment(id: string): string | undefined {
  if (id === "" || Buffer.byteLength(id) > MAX_ID_BYTES) return undefined;
  const encoded = encodeURIComponent(id);
  if (encoded === ".") return "%2E";
  if (encoded === "..") return "%2E%2E";
  return encoded;
}

/** Byte order of the UTF-8 encodings, the order S3 lists keys in; JS string order differs past U+FFFF. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
