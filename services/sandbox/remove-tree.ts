import { chownSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * A subdirectory whose path is longer is moved up before it is entered: every path this module
 * hands the kernel stays under PATH_MAX (4096 bytes) with room for one more name (at most 255).
 */
const MAX_DIR_PATH_BYTES = 2048;

/**
 * Remove `dir` and everything in it, however deep. Code in a workspace can nest directories
 * until a path inside is past PATH_MAX, where `rmSync` fails (ENAMETOOLONG) and a path-based walk
 * cannot reach. Node has no openat(), and chdir() would move the whole service's working
 * directory, so a directory that deep is renamed into a fresh directory directly under `dir`:
 * its path becomes short again, and removal goes on from there. Links are removed, never
 * followed (a Dirent's type is the entry's own, as lstat gives it).
 *
 * No process may write in `dir` meanwhile: the workspace is idle, none of its code runs. A `dir`
 * that is not there is removed already; a link there is removed, not what it points at.
 */
export function removeTree(dir: string): void {
  let found: ReturnType<typeof lstatSync>;
  try {
    found = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  // a link (or a file) where the directory was is removed itself, never followed
  if (!found.isDirectory()) {
    unlinkSync(dir);
    return;
  }
  /** Where directories too deep to enter are moved; made when first needed. */
  let hoisted: string | undefined;
  let moves = 0;
  // post-order without recursion (the depth is the code's to choose): a directory is removed
  // the second time it is on top, once everything under it has been
  const stack: { path: string; listed: boolean }[] = [{ path: dir, listed: false }];
  while (true) {
    const top = stack.at(-1);
    if (!top) break;
    if (top.listed) {
      stack.pop();
      // `dir` last of all, after `hoisted`, which was never in its listing
      if (top.path !== dir) rmdirSync(top.path);
      continue;
    }
    top.listed = true;
    for (const entry of readdirSync(top.path, { withFileTypes: true })) {
      const path = join(top.path, entry.name);
      if (!entry.isDirectory()) {
        unlinkSync(path);
      } else if (Buffer.byteLength(path) <= MAX_DIR_PATH_BYTES) {
        stack.push({ path, listed: false });
      } else {
        hoisted ??= hoistInto(dir, found);
        const moved = join(hoisted, String(moves++));
        renameSync(path, moved);
        stack.push({ path: moved, listed: false });
      }
    }
  }
  if (hoisted) rmdirSync(hoisted);
  rmdirSync(dir);
}

/**
 * The directory under `dir` that deep directories move to, owned as `dir` is: if the removal
 * stops half way, the workspace's own user can still reach and remove what was moved there.
 */
function hoistInto(dir: string, owner: { uid: number; gid: number }): string {
  const hoisted = mkdtempSync(join(dir, ".deep-"));
  chownSync(hoisted, owner.uid, owner.gid);
  return hoisted;
}
