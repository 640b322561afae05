import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  type Stats,
  writeSync,
} from "node:fs";
import { SandboxError } from "./errors.js";
import { displayPath } from "./workspace-path.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const MAX_DEPTH = 32;

/** The host side of one workspace, as the file tools reach it. */
export interface WorkspaceDir {
  dir: string;
  uid: number;
  gid: number;
}

export type EntryType = "file" | "directory" | "symlink" | "other";

export interface ListEntry {
  path: string;
  type: EntryType;
  size: number;
  /** Where a symlink points, as written; never followed. */
  target?: string;
}

/*
 * The service runs as root and the workspace belongs to code that may race it, swapping a
 * directory for a symlink between a check and a use. So paths are never resolved as strings:
 * each step opens the next component relative to the directory already open, through
 * /proc/self/fd/N (an openat without native bindings), with O_NOFOLLOW. A link anywhere in the
 * path is refused; nothing outside the workspace can be reached, whatever code does meanwhile.
 */
const at = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

/** The SandboxError for an errno met opening the last of `parts` in `dirFd`. */
function fail(error: unknown, parts: readonly string[], dirFd: number): never {
  let code = (error as NodeJS.ErrnoException).code;
  const path = displayPath(parts);
  // O_DIRECTORY with O_NOFOLLOW reports a symlink as ENOTDIR: ask what it is to say so
  if (code === "ENOTDIR" && isSymlink(dirFd, parts.at(-1) ?? "")) code = "ELOOP";
  switch (code) {
    case "ELOOP":
      throw new SandboxError(
        "symlink_refused",
        `"${path}" is or goes through a symbolic link, which the file tools never follow`,
      );
    case "ENOENT":
      throw new SandboxError("not_found", `"${path}" does not exist in the workspace`);
    case "ENOTDIR":
      throw new SandboxError("not_a_directory", `a part of "${path}" is not a directory`);
    case "EISDIR":
      throw new SandboxError("not_a_file", `"${path}" is a directory`);
    case "ENXIO":
      // a FIFO without a reader, or a socket: opened without blocking, refused
      throw new SandboxError("not_a_file", `"${path}" is not a regular file`);
    default:
      throw error;
  }
}

/** Open the directory `parts` names, component by component; with `create`, make missing ones (owned by the workspace user). */
function openDir(workspace: WorkspaceDir, parts: readonly string[], create: boolean): number {
  let fd = openSync(workspace.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    for (const [i, part] of parts.entries()) {
      let next: number;
      try {
        if (create) makeDir(fd, part, workspace);
        next = openSync(at(fd, part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        fail(error, parts.slice(0, i + 1), fd);
      }
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

function makeDir(dirFd: number, name: string, workspace: WorkspaceDir): void {
  try {
    mkdirSync(at(dirFd, name), 0o755);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  const fd = openSync(at(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    fchownSync(fd, workspace.uid, workspace.gid);
  } finally {
    closeSync(fd);
  }
}

function withFile<T>(
  workspace: WorkspaceDir,
  parts: readonly string[],
  flags: number,
  use: (fd: number) => T,
  create = false,
): T {
  const name = parts.at(-1);
  if (name === undefined)
    throw new SandboxError("not_a_file", "the workspace itself is a directory; name a file in it");
  const dirFd = openDir(workspace, parts.slice(0, -1), create);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO that code left here must not hang the service
    fd = openSync(at(dirFd, name), flags | O_NOFOLLOW | O_NONBLOCK, 0o644);
  } catch (error) {
    fail(error, parts, dirFd);
  } finally {
    closeSync(dirFd);
  }
  try {
    if (!fstatSync(fd).isFile()) {
      throw new SandboxError("not_a_file", `"${displayPath(parts)}" is not a regular file`);
    }
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

/** At most `maxBytes` of a file, and its whole size. */
export function readWorkspaceFile(
  workspace: WorkspaceDir,
  parts: readonly string[],
  maxBytes: number,
): { data: Buffer; size: number } {
  return withFile(workspace, parts, O_RDONLY, (fd) => {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, maxBytes));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { data: buffer.subarray(0, read), size };
  });
}

/** Create or replace a file, making missing parent directories; everything made is owned by the workspace user. */
export function writeWorkspaceFile(workspace: WorkspaceDir, parts: readonly string[], data: Buffer): void {
  withFile(
    workspace,
    parts,
    O_WRONLY | O_CREAT,
    (fd) => {
      // truncate only once the target is known to be a regular file inside the workspace
      ftruncateSync(fd, 0);
      fchownSync(fd, workspace.uid, workspace.gid);
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written);
    },
    true,
  );
}

/** The entries under a directory, sorted by path; symlinks are listed, never followed. */
export function listWorkspace(
  workspace: WorkspaceDir,
  parts: readonly string[],
  options: { recursive: boolean; maxEntries: number },
): { entries: ListEntry[]; truncated: boolean } {
  const entries: ListEntry[] = [];
  let truncated = false;
  const walk = (dirFd: number, prefix: readonly string[], depth: number) => {
    const names = readdirSync(at(dirFd, "")).sort();
    for (const name of names) {
      if (entries.length >= options.maxEntries) {
        truncated = true;
        return;
      }
      const path = [...prefix, name];
      let stat: Stats;
      try {
        stat = lstatSync(at(dirFd, name));
      } catch {
        continue; // removed by running code since readdir: it is simply gone
      }
      const entry: ListEntry = { path: path.join("/"), type: entryType(stat), size: stat.size };
      if (entry.type === "symlink") entry.target = readTarget(dirFd, name);
      entries.push(entry);
      if (entry.type !== "directory" || !options.recursive) continue;
      if (depth >= MAX_DEPTH) {
        truncated = true;
        continue;
      }
      let child: number;
      try {
        child = openSync(at(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch {
        continue; // swapped for something else since lstat: not followed
      }
      try {
        walk(child, path, depth + 1);
      } finally {
        closeSync(child);
      }
    }
  };
  const fd = openDir(workspace, parts, false);
  try {
    walk(fd, parts, 0);
  } finally {
    closeSync(fd);
  }
  return { entries, truncated };
}

function entryType(stat: Stats): EntryType {
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) return "symlink";
  return "other";
}

function isSymlink(dirFd: number, name: string): boolean {
  try {
    return lstatSync(at(dirFd, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

function readTarget(dirFd: number, name: string): string {
  try {
    return readlinkSync(at(dirFd, name));
  } catch {
    return "";
  }
}
