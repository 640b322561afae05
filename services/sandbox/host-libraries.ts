import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Language } from "./config.js";

/**
 * What the interpreters and programs need of the host's library directories, found at start, so a
 * sandbox mounts those files and nothing else of /usr/lib: its other runtimes (a JVM, Erlang, a
 * compiler, database servers) stay out of reach of the code, as the languages the config leaves out do.
 */
export interface HostLibraries {
  /** Shared libraries, as the dynamic loader names them (/lib/x86_64-linux-gnu/libc.so.6). */
  libraries: string[];
  /** Each language's own directories (python's standard library and site packages). */
  languageDirs: { language: Language; path: string }[];
}

/** Libraries the C library loads by name at run time, never listed as needed: thread unwinding. */
const RUNTIME_LOADED = ["libgcc_s.so.1"];
const LDD_TIMEOUT_MS = 30_000;

/** Find the libraries of `programs` and of each language's extension modules, with ldd. */
export function findHostLibraries(
  languages: ReadonlyMap<Language, string>,
  programs: readonly string[],
): HostLibraries {
  const languageDirs = [...languages].flatMap(([language, interpreter]) =>
    languageDirsOf(language, interpreter).map((path) => ({ language, path })),
  );
  const modules = languageDirs.flatMap(({ path }) => sharedObjectsUnder(path));
  const files = [...languages.values(), ...programs, ...modules].filter((file) => existsSync(file));
  const libraries = new Set(lddLibraries(files));
  for (const library of [...libraries]) {
    const dir = library.slice(0, library.lastIndexOf("/"));
    for (const name of RUNTIME_LOADED) {
      if (existsSync(join(dir, name))) libraries.add(join(dir, name));
    }
  }
  return { libraries: [...libraries].sort(), languageDirs };
}

/**
 * The libraries ldd lists for each file (`name => /path (addr)` and the loader's `/path (addr)`);
 * the vDSO, "not found" and files that are not dynamic executables give none. Pure.
 */
export function parseLddOutput(output: string): string[] {
  const paths = new Set<string>();
  for (const line of output.split("\n")) {
    const match = /^\s+(?:\S+ => )?(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (match?.[1]) paths.add(match[1]);
  }
  return [...paths];
}

function lddLibraries(files: readonly string[]): string[] {
  if (files.length === 0) return [];
  // one ldd for all: it prints a section per file, and exits non-zero if any is not dynamic
  const ran = spawnSync("ldd", files, { encoding: "utf8", timeout: LDD_TIMEOUT_MS, maxBuffer: 64 << 20 });
  if (ran.error) throw new Error(`ldd could not run (${ran.error.message}): install libc-bin`);
  return parseLddOutput(ran.stdout);
}

/**
 * Python's import path as the sandbox runs it (-s: no user site), outside the standard ones;
 * a directory inside another listed one is left to it. Other languages bring none.
 */
function languageDirsOf(language: Language, interpreter: string): string[] {
  if (language !== "python") return [];
  const ran = spawnSync(interpreter, ["-s", "-c", "import sys\nfor p in sys.path: print(p)"], {
    encoding: "utf8",
    timeout: LDD_TIMEOUT_MS,
  });
  if (ran.status !== 0) return [];
  const dirs = ran.stdout.split("\n").filter((path) => path.startsWith("/") && existsSync(path));
  return dirs.filter((dir) => !dirs.some((other) => other !== dir && dir.startsWith(`${other}/`)));
}

function sharedObjectsUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) =>
      entry.isFile() && /\.so(\.|$)/.test(entry.name) ? [join(entry.parentPath, entry.name)] : [],
    );
  } catch {
    return [];
  }
}
