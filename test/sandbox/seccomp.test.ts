import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  AUDIT_ARCH_X86_64,
  DENIED_X86_64,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  seccompFilter,
  X32_SYSCALL_BIT,
} from "../../services/sandbox/seccomp.js";
import { KERNEL_HEADER, needs } from "../helpers/host-needs.js";
import { startTestSandbox } from "./sandbox-service.js";

/** Run a classic BPF program as the kernel would on one system call (only what the filter uses). */
function verdict(program: Buffer, nr: number, arch = AUDIT_ARCH_X86_64): number {
  const data = [nr, arch];
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data[k / 4] ?? Number.NaN;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error("the program ran off its end");
}

const filter = seccompFilter("x64");

describe("the seccomp filter", () => {
  it("refuses each denied call with EPERM and allows the others", () => {
    if (!filter) throw new Error("no filter for x64");
    expect(filter.length % 8).toBe(0);
    for (const [name, nr] of Object.entries(DENIED_X86_64)) {
      expect([name, verdict(filter, nr)]).toEqual([name, SECCOMP_RET_ERRNO | 1]);
    }
    const denied = new Set(Object.values(DENIED_X86_64));
    for (let nr = 0; nr < 460; nr++) {
      if (!denied.has(nr)) expect([nr, verdict(filter, nr)]).toEqual([nr, SECCOMP_RET_ALLOW]);
    }
  });

  it("refuses the x32 ABI's numbers and kills a process of another architecture", () => {
    if (!filter) throw new Error("no filter for x64");
    expect(verdict(filter, X32_SYSCALL_BIT | 0)).toBe(SECCOMP_RET_ERRNO | 1);
    expect(verdict(filter, X32_SYSCALL_BIT | 250)).toBe(SECCOMP_RET_ERRNO | 1);
    // i386's AUDIT_ARCH, where 250 is not keyctl: nothing of it runs
    expect(verdict(filter, 0, 0x40000003)).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  it("exists only where its numbers hold", () => {
    expect(seccompFilter("arm64")).toBeUndefined();
  });

  it("has the numbers of this machine's kernel headers", needs("kernelHeaders"), () => {
    const text = readFileSync(KERNEL_HEADER, "utf8");
    for (const [name, nr] of Object.entries(DENIED_X86_64)) {
      expect([name, new RegExp(`^#define __NR_${name} (\\d+)$`, "m").exec(text)?.[1]]).toEqual([
        name,
        String(nr),
      ]);
    }
  });
});

const ATTEMPTS = [
  "import ctypes, errno",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "def attempt(nr, *args):",
  "    if libc.syscall(nr, *args) >= 0: return 'ok'",
  "    return errno.errorcode[ctypes.get_errno()]",
  "print('getpid', attempt(39))",
  "print('ptrace', attempt(101, 0, 0, 0, 0))",
  "print('unshare', attempt(272, 0))",
  "print('keyctl', attempt(250, 0, -3, 0))",
].join("\n");

describe("code in a sandbox", needs("sandbox"), () => {
  it.each([
    ["default", { getpid: "ok", ptrace: "EPERM", unshare: "EPERM", keyctl: "EPERM" }],
    // the control: the same calls go through without the filter
    ["off", { getpid: "ok", ptrace: "ok", unshare: "ok" }],
  ])("with seccomp %s gets %o", async (seccomp, expected) => {
    const sandbox = await startTestSandbox(seccomp === "off" ? 190_700 : 190_600, { seccomp });
    try {
      const answer = await sandbox.call("sandbox_exec", { language: "python", code: ATTEMPTS });
      const { stdout, exit_code } = answer.result.structured_content as { stdout: string; exit_code: number };
      expect(exit_code).toBe(0);
      const seen = Object.fromEntries(
        stdout
          .trim()
          .split("\n")
          .map((line) => line.split(" ")),
      );
      expect(seen).toMatchObject(expected);
      if (seccomp === "off") expect(seen.keyctl).not.toBe("EPERM");
    } finally {
      await sandbox.close();
    }
  });
});
