/**
 * The seccomp filter sandboxed code runs under: a classic BPF program, handed to bwrap
 * (`--seccomp FD`), that refuses with EPERM the system calls code has no use for and that are
 * the kernel's riskiest surface (other processes' memory, keyrings, namespaces and mounts, BPF,
 * io_uring, perf, userfaultfd, NUMA, host administration), much as Flatpak's and Docker's
 * default profiles do. Everything else is allowed. Pure: the program is built from tables.
 */

/** System calls refused, by name, with their x86_64 numbers (asm/unistd_64.h). */
// biome-ignore format: a table reads best one group per line
export const DENIED_X86_64: Readonly<Record<string, number>> = {
  // other processes: their memory, their file descriptors, tracing them
  ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, kcmp: 312, pidfd_getfd: 438,
  // the kernel's keyrings are not namespaced
  add_key: 248, request_key: 249, keyctl: 250,
  // new namespaces and mounts (bwrap has set the sandbox's up already)
  unshare: 272, setns: 308, mount: 165, umount2: 166, pivot_root: 155, open_tree: 428,
  move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  // the kernel interfaces most exploits go through
  bpf: 321, perf_event_open: 298, userfaultfd: 323, io_uring_setup: 425, io_uring_enter: 426,
  io_uring_register: 427,
  // NUMA placement, which reaches into memory management
  mbind: 237, set_mempolicy: 238, get_mempolicy: 239, migrate_pages: 256, move_pages: 279,
  // host administration: no use in a sandbox, whatever capabilities it seems to have
  syslog: 103, uselib: 134, acct: 163, swapon: 167, swapoff: 168, reboot: 169, sethostname: 170,
  setdomainname: 171, iopl: 172, ioperm: 173, create_module: 174, init_module: 175,
  finit_module: 313, delete_module: 176, get_kernel_syms: 177, query_module: 178, quotactl: 179,
  nfsservctl: 180, lookup_dcookie: 212, kexec_load: 246, kexec_file_load: 320, vhangup: 153,
  _sysctl: 156, fanotify_init: 300, name_to_handle_at: 303, open_by_handle_at: 304,
};

/** linux/audit.h: AUDIT_ARCH_X86_64. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
/** System calls of the x32 ABI carry this bit; the filter's numbers are x86_64's, so they are refused. */
export const X32_SYSCALL_BIT = 0x40000000;
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;

// classic BPF opcodes (linux/filter.h)
const LD_W_ABS = 0x20;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const RET_K = 0x06;
// offsets in struct seccomp_data
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/**
 * The filter for this machine's architecture as bwrap reads it (struct sock_filter, in the
 * host's byte order), or undefined where there is no table for it (only x86_64 has one).
 */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  if (arch !== "x64") return undefined;
  return encode(filterProgram(Object.values(DENIED_X86_64)));
}

/** The program: another architecture is killed, x32 and each denied number get EPERM, the rest is allowed. */
function filterProgram(denied: readonly number[]): Instruction[] {
  const program: Instruction[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET },
    { code: JMP_JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH_X86_64 },
    { code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_KILL_PROCESS },
    { code: LD_W_ABS, jt: 0, jf: 0, k: NR_OFFSET },
  ];
  // each test jumps over the ones after it and the ALLOW, to the ERRNO at the end
  const tests = [X32_SYSCALL_BIT, ...denied];
  tests.forEach((k, index) => {
    program.push({ code: index === 0 ? JMP_JGE_K : JMP_JEQ_K, jt: tests.length - index, jf: 0, k });
  });
  program.push({ code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ALLOW });
  program.push({ code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ERRNO | EPERM });
  return program;
}

function encode(program: readonly Instruction[]): Buffer {
  if (program.some((instruction) => instruction.jt > 255)) throw new Error("a jump is too long for BPF");
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    const at = index * 8;
    buffer.writeUInt16LE(instruction.code, at);
    buffer.writeUInt8(instruction.jt, at + 2);
    buffer.writeUInt8(instruction.jf, at + 3);
    buffer.writeUInt32LE(instruction.k >>> 0, at + 4);
  });
  return buffer;
}
