import { SandboxError } from "./errors.js";
import { WORKSPACE } from "./launch-command.js";

const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/**
 * The components of a path in the workspace, checked so nothing can name a place outside it:
 * relative to the workspace (or under /workspace, as code sees it), no `..`, no NUL, no name
 * longer than a filesystem allows. "" and "." are the workspace itself ([]). Pure; symlinks are
 * refused where the path is opened (workspace-fs.ts).
 */
export function workspacePath(path: string): string[] {
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
    throw new SandboxError("invalid_path", `the path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (path.includes("\0")) throw new SandboxError("invalid_path", "the path contains a NUL character");
  let relative = path;
  if (path === WORKSPACE || path.startsWith(`${WORKSPACE}/`)) relative = path.slice(WORKSPACE.length);
  else if (path.startsWith("/")) {
    throw new SandboxError(
      "invalid_path",
      `"${path}" is outside the workspace; give a path relative to it, like "data/out.txt" (or under ${WORKSPACE}/)`,
    );
  }
  const parts = relative.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) {
    throw new SandboxError("invalid_path", `"${path}" contains "..": paths may not leave the workspace`);
  }
  const long = parts.find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
  if (long)
    throw new SandboxError("invalid_path", `a name in the path is longer than ${MAX_NAME_BYTES} bytes`);
  return parts;
}

/** The path as the caller sees it in results: relative to the workspace. */
export function displayPath(parts: readonly string[]): string {
  return parts.length === 0 ? "." : parts.join("/");
}
