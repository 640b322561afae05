/** The codes of the sandbox's error results; they are API (in `structured_content.error.code`). */
export type SandboxErrorCode =
  /** A path is absolute outside /workspace, has `..`, or is otherwise malformed. */
  | "invalid_path"
  /** A path goes through or names a symbolic link; the file tools never follow one. */
  | "symlink_refused"
  | "not_found"
  | "not_a_file"
  | "not_a_directory"
  | "too_large"
  /** An argument is malformed: `content` that is not base64 with `encoding: "base64"`. */
  | "invalid_argument"
  /** The language has no interpreter in the service's config. */
  | "unknown_language"
  /** Every run slot, workspace user id or job slot is taken; try again later. */
  | "busy"
  /** bwrap could not set the sandbox up; the service log says why. */
  | "sandbox_failed";

/** A failure the caller can act on, with a stable code; the message says what to do. */
export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "SandboxError";
  }
}
