import { createHash } from "node:crypto";
import { chownSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { SandboxError } from "./errors.js";
import { removeTree } from "./remove-tree.js";
import type { WorkspaceDir } from "./workspace-fs.js";

/** Whose workspace: always the call's top-level identity, never anything from its arguments. */
export interface Owner {
  tenantId: string;
  sessionId: string;
}

interface Entry extends WorkspaceDir {
  name: string;
  /** Calls and jobs using it now; it never expires while this is above zero. */
  users: number;
  lastUsed: number;
}

export interface Lease {
  readonly workspace: WorkspaceDir;
  release(): void;
}

/** The directory name of an owner's workspace: a digest, so no tenant or session id can shape a path. */
export function workspaceName(owner: Owner): string {
  return createHash("sha256").update(`${owner.tenantId}\0${owner.sessionId}`).digest("hex").slice(0, 32);
}

/**
 * The per-session workspaces under one root directory. Each gets a host uid of its own from the
 * configured range, so one session's processes count against its own process limit and its files
 * are its own. A workspace unused for `idleMs` is removed, its uid freed.
 */
export class Workspaces {
  readonly #byName = new Map<string, Entry>();
  readonly #uidsInUse = new Set<number>();

  constructor(
    private readonly root: string,
    private readonly uids: { first: number; count: number },
    private readonly idleMs: number,
    private readonly logger: Logger,
  ) {}

  /** Adopt the workspaces a previous run left, as if used just now: they expire an idle time after this start. */
  open(): void {
    mkdirSync(this.root, { recursive: true, mode: 0o711 });
    for (const name of readdirSync(this.root)) {
      if (!/^[0-9a-f]{32}$/.test(name)) continue;
      const dir = join(this.root, name);
      // the entry itself, never what a link there points at
      const found = lstatSync(dir);
      const { uid, gid } = found;
      if (
        !found.isDirectory() ||
        uid < this.uids.first ||
        uid >= this.uids.first + this.uids.count ||
        this.#uidsInUse.has(uid)
      ) {
        // not a workspace of ours to run as (the range changed, two share a uid, or it is no
        // directory): start it afresh
        removeTree(dir);
        continue;
      }
      this.#uidsInUse.add(uid);
      this.#byName.set(name, { name, dir, uid, gid, users: 0, lastUsed: Date.now() });
    }
  }

  /** The owner's workspace, created on first use; held until `release()`. */
  acquire(owner: Owner): Lease {
    const name = workspaceName(owner);
    let entry = this.#byName.get(name);
    if (!entry) {
      const uid = this.#freeUid();
      const dir = join(this.root, name);
      mkdirSync(dir, { mode: 0o700 });
      chownSync(dir, uid, uid);
      entry = { name, dir, uid, gid: uid, users: 0, lastUsed: Date.now() };
      this.#byName.set(name, entry);
      this.#uidsInUse.add(uid);
      this.logger.info(
        { tenant_id: owner.tenantId, session_id: owner.sessionId, workspace: name, uid },
        "workspace created",
      );
    }
    entry.users += 1;
    const held = entry;
    let released = false;
    return {
      workspace: { dir: held.dir, uid: held.uid, gid: held.gid },
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        held.lastUsed = Date.now();
      },
    };
  }

  /**
   * Remove every workspace idle since before `now - idleMs`; returns their directories. One that
   * cannot be removed is logged and kept, with its uid, as it is on disk: the next sweep tries
   * again, and its session, should it come back first, finds what is left.
   */
  sweep(now: number): string[] {
    const removed: string[] = [];
    for (const entry of this.#byName.values()) {
      if (entry.users > 0 || now - entry.lastUsed < this.idleMs) continue;
      try {
        removeTree(entry.dir);
      } catch (error) {
        this.logger.error(
          { err: error, workspace: entry.name },
          "an idle workspace could not be removed; the next sweep tries again",
        );
        continue;
      }
      this.#byName.delete(entry.name);
      this.#uidsInUse.delete(entry.uid);
      this.logger.info({ workspace: entry.name, idle_ms: now - entry.lastUsed }, "idle workspace removed");
      removed.push(entry.dir);
    }
    return removed;
  }

  #freeUid(): number {
    for (let uid = this.uids.first; uid < this.uids.first + this.uids.count; uid++) {
      if (!this.#uidsInUse.has(uid)) return uid;
    }
    throw new SandboxError("busy", "every workspace user id is taken; try again once idle workspaces expire");
  }
}
