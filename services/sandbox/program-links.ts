import { chmodSync, copyFileSync, linkSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { ProgramLink } from "./layout.js";

/**
 * Build the program directories afresh under `root`: a hard link to each program's file, or a
 * copy where a link cannot be made (another filesystem). A program the host upgrades later keeps
 * its old file here until the service restarts, as a running process keeps its old binary.
 */
export function installProgramLinks(root: string, links: readonly ProgramLink[]): void {
  rmSync(root, { recursive: true, force: true });
  for (const { source, link } of links) {
    mkdirSync(dirname(link), { recursive: true, mode: 0o755 });
    try {
      linkSync(source, link);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw error;
      copyFileSync(source, link);
      // never setuid or setgid: a copy is not the package's file
      chmodSync(link, statSync(source).mode & 0o777);
    }
  }
}
