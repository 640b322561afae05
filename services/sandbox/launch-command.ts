import { dirname } from "node:path";
import type { Language, Limits } from "./config.js";
import type { SandboxLayout } from "./layout.js";

/** Where the session's workspace appears inside the sandbox, and the working directory of code. */
export const WORKSPACE = "/workspace";
/** Where the run's code appears inside, read-only: a file, never an argument, so no argv limit applies and no process listing shows it. */
export const CODE_FILE = "/run/code/main";
/** bwrap sets the sandbox up, then waits for a byte on this fd before it runs the program (runner.ts). */
export const BLOCK_FD = 3;
/** bwrap writes its child's host pid here, as JSON, before it waits on BLOCK_FD (runner.ts). */
export const INFO_FD = 4;
/** bwrap reads the seccomp filter (seccomp.ts) from here, when there is one. */
export const SECCOMP_FD = 5;
/**
 * The first byte of every run's stdout, written by the interpreter before it reads the code.
 * Neither prlimit nor bwrap writes to stdout, and nothing in the workspace runs before it (see
 * languageArgs), so a run whose stdout never got it never ran any of its code: that, not what
 * is on stderr, tells a sandbox that failed to start from a program that failed (runner.ts, which
 * takes the byte off).
 */
export const STARTED_BYTE = 0x06;
/** The user code runs as inside: stable, whatever host uid the workspace has. */
const INSIDE_ID = "1000";
// V8 reserves address space it never touches, so the address-space cap sits well above the heap cap.
const ADDRESS_SPACE_HEADROOM = 2 * 1024 ** 3;
// bwrap's processes under the same uid: this run's outer monitor, and the two of a sandbox made
// ready for the session's next call
const BWRAP_PROCESSES = 3;

export interface Launch {
  /** The host directory of the session's workspace. */
  workspaceDir: string;
  /** The host directory that will hold the run's code, as `main`. */
  codeDir: string;
  language: Language;
  /** A seccomp filter comes on SECCOMP_FD. */
  seccomp: boolean;
}

export interface LaunchPrograms {
  prlimit: string;
  bwrap: string;
}

/** argv for one sandboxed run: prlimit sets the hard limits, then execs bwrap, which execs the interpreter. Pure. */
export function launchCommand(
  programs: LaunchPrograms,
  layout: SandboxLayout,
  limits: Limits,
  launch: Launch,
): { file: string; args: string[] } {
  const interpreter = layout.interpreters.get(launch.language);
  if (interpreter === undefined) throw new Error(`no interpreter for ${launch.language}`);
  return {
    file: programs.prlimit,
    args: [
      ...rlimitArgs(limits),
      "--",
      programs.bwrap,
      ...bwrapArgs(layout, limits, launch),
      interpreter,
      ...languageArgs(launch.language),
    ],
  };
}

/** Hard limits (soft = hard, so code cannot raise them), except CPU: SIGXCPU first, SIGKILL a second later. */
export function rlimitArgs(limits: Limits): string[] {
  const both = (value: number) => `${value}:${value}`;
  return [
    `--cpu=${limits.cpu_seconds}:${limits.cpu_seconds + 1}`,
    `--data=${both(limits.memory_bytes)}`,
    `--as=${both(limits.memory_bytes + ADDRESS_SPACE_HEADROOM)}`,
    `--nproc=${both(limits.max_processes + BWRAP_PROCESSES)}`,
    `--fsize=${both(limits.max_file_bytes)}`,
    `--nofile=${both(limits.max_open_files)}`,
    "--core=0:0",
    "--memlock=0:0",
    // code may not lower its niceness back (limits.nice), whatever the host grants its users
    "--nice=0:0",
  ];
}

export function bwrapArgs(
  layout: SandboxLayout,
  limits: Limits,
  dirs: Pick<Launch, "workspaceDir" | "codeDir" | "seccomp">,
): string[] {
  const args = [
    // every namespace: no network, own pids, own IPC and hostname; an explicit user namespace so
    // that nested ones can be refused (they are kernel attack surface code has no use for)
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    INSIDE_ID,
    "--gid",
    INSIDE_ID,
    "--hostname",
    "sandbox",
    "--die-with-parent",
    // the program is the namespace's pid 1, with no reaper of bwrap's in between: a reaper
    // outlives bwrap for a moment and is left to the host's init to reap, a zombie counted
    // against the workspace's process limit (forever where the service itself is pid 1)
    "--as-pid-1",
    // no --new-session: the runner starts bwrap in a session of its own without a terminal, and
    // the sandbox must stay in that process group until its code runs, so one kill reaches it
    // even before --die-with-parent is armed (runner.ts)
  ];
  for (const mount of layout.mounts) args.push("--ro-bind", mount.source, mount.target);
  for (const link of layout.symlinks) args.push("--symlink", link.target, link.path);
  const size = String(limits.tmp_bytes);
  args.push(
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    size,
    "--tmpfs",
    "/dev/shm",
    // /dev and / are in-memory and owned by the sandbox user: read-only, or they would be unbounded scratch space
    "--remount-ro",
    "/dev",
    "--size",
    size,
    "--tmpfs",
    "/tmp",
    "--ro-bind",
    dirs.codeDir,
    dirname(CODE_FILE),
    "--bind",
    dirs.workspaceDir,
    WORKSPACE,
    "--remount-ro",
    "/",
    "--chdir",
    WORKSPACE,
    "--clearenv",
    "--setenv",
    "PATH",
    layout.pathDirs.join(":"),
    "--setenv",
    "HOME",
    WORKSPACE,
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "LANG",
    "C.UTF-8",
    ...(dirs.seccomp ? ["--seccomp", String(SECCOMP_FD)] : []),
    "--info-fd",
    String(INFO_FD),
    "--block-fd",
    String(BLOCK_FD),
    "--",
  );
  return args;
}

/**
 * The interpreter's arguments that run the code in CODE_FILE as if given inline (`bash -c`,
 * `python -c`, `node -e`): the working directory first on the import path, no script name;
 * python unbuffered so output streams as it is written. Each first writes STARTED_BYTE, and stops
 * if it cannot. Nothing of the workspace may run before that byte, or code there could fail
 * looking like a sandbox that never started: bash reads no ~/.bashrc (which it would, its stdin
 * being a socket), python adds no user site-packages (its .pth files and usercustomize run at start).
 */
export function languageArgs(language: Language): string[] {
  switch (language) {
    case "bash":
      return ["--norc", "-c", `printf '\\006' || exit; . ${CODE_FILE}`];
    case "python":
      return [
        "-s",
        "-u",
        "-c",
        `__import__("os").write(1, b"\\x06"); exec(compile(open(${JSON.stringify(CODE_FILE)}).read(), "<string>", "exec"))`,
      ];
    case "node":
      return [
        "-e",
        `require("fs").writeSync(1, "\\x06"); (0, eval)(require("fs").readFileSync(${JSON.stringify(CODE_FILE)}, "utf8"))`,
      ];
  }
}
