/**
 * The codes of every refusal the storage service makes. They are API: tools answer with them in
 * `structured_content.error.code`, tests check them, and callers branch on them, never on messages.
 */
export type StorageErrorCode =
  /** The path or prefix breaks the path rules (traversal, absolute, NUL, empty segment, too long). */
  | "invalid_path"
  /** An argument is malformed: bad base64, a bad cursor, contradictory conditions. */
  | "invalid_argument"
  | "not_found"
  /** `if_match` or `if_none_match` did not hold; nothing was changed. */
  | "precondition_failed"
  /** The object is over `max_object_bytes`. */
  | "too_large"
  /** The read asked for, or would return, more than `max_read_bytes`. */
  | "range_too_large"
  /** The read's `offset` is past the end of the object. */
  | "invalid_range"
  /** The write would take the scope over its byte or object quota. */
  | "quota_exceeded"
  /** The bytes are not UTF-8 text; read them with `encoding: "base64"`. */
  | "not_utf8"
  /** The filesystem backend: a file stands where a folder is needed, or a folder where a file is. */
  | "path_conflict"
  /** The filesystem backend: a symbolic link on the path; the service never follows one. */
  | "symlink_refused"
  /** The backend failed (disk, network, object store); the outcome of a write is then unknown. */
  | "backend_failed";

export interface StorageError {
  code: StorageErrorCode;
  /** For people and models: what happened and what to do. Never holds a secret or a host path. */
  message: string;
  /** Facts a caller may act on, such as the current etag after a failed precondition. */
  details?: Record<string, unknown>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: StorageError };

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });

export function fail<T = never>(
  code: StorageErrorCode,
  message: string,
  details?: Record<string, unknown>,
): Outcome<T> {
  return { ok: false, error: details ? { code, message, details } : { code, message } };
}
