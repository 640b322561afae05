import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Language } from "./config.js";

/** A host path mounted read-only at `target` inside the sandbox. */
export interface Mount {
  source: string;
  target: string;
}

/** A program's file, hard-linked (or copied) to `link` in the host directory mounted where it appears inside. */
export interface ProgramLink {
  source: string;
  link: string;
}

/**
 * What a sandbox sees of the host, resolved once at start: read-only mounts, the top-level
 * symlinks of a merged-/usr system, each language's interpreter and the PATH. Nothing else of the
 * host exists inside.
 */
export interface SandboxLayout {
  mounts: readonly Mount[];
  /** `path` is a symlink to `target`, as on the host (/bin → usr/bin). */
  symlinks: readonly { path: string; target: string }[];
  interpreters: ReadonlyMap<Language, string>;
  pathDirs: readonly string[];
}

/** Paths the sandbox itself provides; a host mount there would hide or defeat them. */
export const SANDBOX_OWN_PATHS = ["/workspace", "/tmp", "/proc", "/dev"] as const;
const TOP_LEVEL_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

export interface LayoutRequest {
  languages: ReadonlyMap<Language, string>;
  programs: readonly string[];
  systemPaths: readonly string[];
  /** The shared libraries the interpreters and programs need (host-libraries.ts). */
  libraries: readonly string[];
  /** Each language's own directories (python's import path). */
  languageDirs: readonly { language: Language; path: string }[];
  /** Host directories no mount may contain or lie in: the workspaces, the service's own files. */
  private: readonly string[];
  /**
   * Where the program directories are built on the host: the interpreters and programs of one
   * directory (/usr/bin), and the libraries of one (/usr/lib/x86_64-linux-gnu), are linked into
   * one host directory, mounted there with one bind instead of one bind each, which is most of
   * what a sandbox costs to set up.
   */
  programsRoot: string;
}

export type LayoutResult =
  | { ok: true; layout: SandboxLayout; links: ProgramLink[]; skipped: string[] }
  | { ok: false; problems: string[] };

/** Resolve what the sandbox will see; every problem is reported, missing optional paths are listed. */
export function resolveLayout(request: LayoutRequest): LayoutResult {
  const problems: string[] = [];
  const skipped: string[] = [];
  const mounts = new Map<string, Mount>();
  const links = new Map<string, ProgramLink>();
  const check = (source: string, target: string, what: string): boolean => {
    const clash = SANDBOX_OWN_PATHS.find((own) => within(target, own) || within(own, target));
    if (target === "/" || clash) {
      problems.push(`${what}: ${source} would cover the sandbox's own ${clash ?? "/"}`);
      return false;
    }
    const real = realpathSync(source);
    const exposed = request.private.find((path) => within(path, real) || within(real, path));
    if (exposed) {
      problems.push(`${what}: ${source} would expose ${exposed} to sandboxed code`);
      return false;
    }
    return true;
  };
  const addLink = (source: string, what: string): string | undefined => {
    const target = sandboxPath(source);
    if (!check(source, target, what)) return undefined;
    links.set(target, { source: realpathSync(source), link: join(request.programsRoot, target) });
    return target;
  };

  const interpreters = new Map<Language, string>();
  for (const [language, path] of request.languages) {
    if (!isExecutableFile(path)) {
      problems.push(`languages.${language}: ${path} is not an executable file on this host`);
      continue;
    }
    const target = addLink(path, `languages.${language}`);
    if (target) interpreters.set(language, target);
  }
  for (const path of request.programs) {
    if (isExecutableFile(path)) addLink(path, "programs");
    else skipped.push(path);
  }
  const programDirs = [...new Set([...links.keys()].map(dirname))];
  const dirs = [
    ...request.systemPaths.map((path) => ({ path, what: "system_paths" })),
    ...request.languageDirs.map(({ language, path }) => ({ path, what: `languages.${language}` })),
  ];
  for (const { path, what } of dirs) {
    if (!exists(path)) {
      skipped.push(path);
      continue;
    }
    const target = sandboxPath(path);
    const covered = programDirs.find((dir) => within(dir, target) || within(target, dir));
    if (covered) {
      problems.push(
        `${what}: ${path} overlaps ${covered}, where only the listed programs appear; list them in programs`,
      );
    } else if (check(path, target, what)) {
      mounts.set(target, { source: path, target });
    }
  }
  const mounted = [...mounts.keys()];
  // a library inside a mounted directory is there already; the others are linked like programs
  for (const library of request.libraries) {
    const target = sandboxPath(library);
    if (!mounted.some((dir) => within(target, dir))) addLink(library, "libraries");
  }
  const linkDirs = [...new Set([...links.keys()].map(dirname))];
  for (const dir of linkDirs) {
    const nested = mounted.find((path) => within(path, dir) && path !== dir);
    if (nested && !programDirs.includes(dir)) {
      problems.push(
        `system_paths: ${nested} lies in ${dir}, where only the libraries the programs need appear`,
      );
    }
    mounts.set(dir, { source: join(request.programsRoot, dir), target: dir });
  }
  if (problems.length > 0) return { ok: false, problems };

  const symlinks = TOP_LEVEL_LINKS.flatMap((path) => {
    const target = relativeSymlink(path);
    return target === undefined || mounts.has(path) ? [] : [{ path, target }];
  });
  // a parent must be mounted before its children, or it would hide them
  const ordered = [...mounts.values()].sort((a, b) => (a.target < b.target ? -1 : 1));
  return {
    ok: true,
    layout: { mounts: ordered, symlinks, interpreters, pathDirs: programDirs },
    links: [...links.values()],
    skipped,
  };
}

/**
 * Where a host path appears inside: its directory canonical, its own name kept, so
 * /usr/bin/python3 stays python3 (the bind follows the link) and /bin/cat lands in /usr/bin.
 */
function sandboxPath(path: string): string {
  const dir = dirname(path);
  return exists(dir) ? join(realpathSync(dir), basename(path)) : path;
}

/** True when `path` is `dir` or inside it. */
function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The target of a relative top-level symlink such as /bin → usr/bin, or undefined. */
function relativeSymlink(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink()) return undefined;
    const target = readlinkSync(path);
    return target.startsWith("/") ? undefined : target;
  } catch {
    return undefined;
  }
}
