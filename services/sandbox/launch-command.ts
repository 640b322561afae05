import type { Language, Limits } from "./config.js";
import type { SandboxLayout } from "./layout.js";

/** Where the session's workspace appears inside the sandbox, and the working directory of code. */
export const WORKSPACE = "/workspace";
/** The user code runs as inside: stable, whatever host uid the workspace has. */
const INSIDE_ID = "1000";
// V8 reserves address space it never touches, so the address-space cap sits well above the heap cap.
const ADDRESS_SPACE_HEADROOM = 2 * 1024 ** 3;
// bwrap's own two processes (the outer monitor and the pid-1 reaper) run under the same uid.
const BWRAP_PROCESSES = 2;

export interface Launch {
  /** The host directory of the session's workspace. */
  workspaceDir: string;
  language: Language;
  code: string;
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
      ...bwrapArgs(layout, limits, launch.workspaceDir),
      interpreter,
      ...languageArgs(launch.language, launch.code),
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
  ];
}

export function bwrapArgs(layout: SandboxLayout, limits: Limits, workspaceDir: string): string[] {
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
    // no --new-session: the runner starts bwrap in a session of its own without a terminal, and
    // bwrap's reaper must stay in that process group, where one kill reaches it (runner.ts)
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
    "--bind",
    workspaceDir,
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
    "--",
  );
  return args;
}

/** The interpreter's arguments that run `code`; output unbuffered so it streams as it is written. */
export function languageArgs(language: Language, code: string): string[] {
  switch (language) {
    case "bash":
      return ["-c", code];
    case "python":
      return ["-u", "-c", code];
    case "node":
      return ["-e", code];
  }
}
