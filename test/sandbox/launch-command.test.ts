import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../services/sandbox/config.js";
import {
  bwrapArgs,
  languageArgs,
  launchCommand,
  rlimitArgs,
  STARTED_BYTE,
} from "../../services/sandbox/launch-command.js";
import type { SandboxLayout } from "../../services/sandbox/layout.js";

const layout: SandboxLayout = {
  mounts: [
    { source: "/usr/bin/bash", target: "/usr/bin/bash" },
    { source: "/usr/lib", target: "/usr/lib" },
  ],
  symlinks: [{ path: "/bin", target: "usr/bin" }],
  interpreters: new Map([["bash", "/usr/bin/bash"]]),
  pathDirs: ["/usr/bin"],
};

/** The operands of every occurrence of `flag` in argv. */
function operands(args: string[], flag: string, count: number): string[][] {
  return args.flatMap((arg, i) => (arg === flag ? [args.slice(i + 1, i + 1 + count)] : []));
}

describe("the launch command", () => {
  const { file, args } = launchCommand(
    { prlimit: "/usr/bin/prlimit", bwrap: "/usr/bin/bwrap" },
    layout,
    DEFAULT_LIMITS,
    { workspaceDir: "/state/workspaces/abc", codeDir: "/state/runs/run-1", language: "bash", seccomp: true },
  );

  it("sets the limits with prlimit, then runs bwrap, then the interpreter on the code file", () => {
    expect(file).toBe("/usr/bin/prlimit");
    const bwrapAt = args.indexOf("/usr/bin/bwrap");
    expect(args[bwrapAt - 1]).toBe("--");
    expect(args.slice(-4)).toEqual(["/usr/bin/bash", ...languageArgs("bash")]);
    expect(args[args.length - 5]).toBe("--");
    // bwrap waits, set up, until the runner lets the program run
    expect(operands(args, "--block-fd", 1)).toEqual([["3"]]);
    expect(operands(args, "--info-fd", 1)).toEqual([["4"]]);
  });

  it("takes a seccomp filter from its own fd only when there is one", () => {
    expect(operands(args, "--seccomp", 1)).toEqual([["5"]]);
    const without = launchCommand({ prlimit: "p", bwrap: "b" }, layout, DEFAULT_LIMITS, {
      workspaceDir: "/w",
      codeDir: "/c",
      language: "bash",
      seccomp: false,
    });
    expect(without.args).not.toContain("--seccomp");
  });

  it("unshares every namespace, the network included, and dies with the service", () => {
    for (const flag of [
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--die-with-parent",
      "--as-pid-1",
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).not.toContain("--share-net");
    expect(args).not.toContain("--new-session");
  });

  it("makes the workspace the only writable host path, the system read-only", () => {
    expect(operands(args, "--bind", 2)).toEqual([["/state/workspaces/abc", "/workspace"]]);
    expect(args).not.toContain("--dev-bind");
    expect(operands(args, "--ro-bind", 2)).toEqual([
      ["/usr/bin/bash", "/usr/bin/bash"],
      ["/usr/lib", "/usr/lib"],
      ["/state/runs/run-1", "/run/code"],
    ]);
    expect(operands(args, "--remount-ro", 1)).toEqual([["/dev"], ["/"]]);
    // the root is made read-only after every mount point exists
    expect(args.lastIndexOf("--remount-ro")).toBeGreaterThan(args.indexOf("--bind"));
  });

  it("gives a private, sized /tmp and /dev/shm, and a cleared environment", () => {
    const size = String(DEFAULT_LIMITS.tmp_bytes);
    expect(operands(args, "--size", 3)).toEqual([
      [size, "--tmpfs", "/dev/shm"],
      [size, "--tmpfs", "/tmp"],
    ]);
    expect(args).toContain("--clearenv");
    expect(operands(args, "--setenv", 2)).toEqual([
      ["PATH", "/usr/bin"],
      ["HOME", "/workspace"],
      ["TMPDIR", "/tmp"],
      ["LANG", "C.UTF-8"],
    ]);
  });

  it("refuses a language without an interpreter", () => {
    expect(() =>
      launchCommand({ prlimit: "p", bwrap: "b" }, layout, DEFAULT_LIMITS, {
        workspaceDir: "/w",
        codeDir: "/c",
        language: "python",
        seccomp: false,
      }),
    ).toThrow(/no interpreter for python/);
  });
});

describe("rlimits", () => {
  it("are hard limits from the config, with room for bwrap's processes and a warm sandbox's", () => {
    expect(rlimitArgs({ ...DEFAULT_LIMITS, cpu_seconds: 7, max_processes: 10, memory_bytes: 1000 })).toEqual([
      "--cpu=7:8",
      "--data=1000:1000",
      `--as=${1000 + 2 * 1024 ** 3}:${1000 + 2 * 1024 ** 3}`,
      "--nproc=13:13",
      `--fsize=${DEFAULT_LIMITS.max_file_bytes}:${DEFAULT_LIMITS.max_file_bytes}`,
      `--nofile=${DEFAULT_LIMITS.max_open_files}:${DEFAULT_LIMITS.max_open_files}`,
      "--core=0:0",
      "--memlock=0:0",
      "--nice=0:0",
    ]);
  });
});

describe("language arguments", () => {
  it("write STARTED_BYTE, then run the code file as inline code: bash -c, python -u -c, node -e", () => {
    expect(STARTED_BYTE).toBe(0x06);
    // and nothing of the workspace first: no ~/.bashrc, no user site-packages
    expect(languageArgs("bash")).toEqual(["--norc", "-c", "printf '\\006' || exit; . /run/code/main"]);
    expect(languageArgs("python")).toEqual([
      "-s",
      "-u",
      "-c",
      '__import__("os").write(1, b"\\x06"); exec(compile(open("/run/code/main").read(), "<string>", "exec"))',
    ]);
    expect(languageArgs("node")).toEqual([
      "-e",
      'require("fs").writeSync(1, "\\x06"); (0, eval)(require("fs").readFileSync("/run/code/main", "utf8"))',
    ]);
  });
});

it("bwrapArgs alone ends with the separator before the program", () => {
  expect(
    bwrapArgs(layout, DEFAULT_LIMITS, { workspaceDir: "/w", codeDir: "/c", seccomp: false }).at(-1),
  ).toBe("--");
});
