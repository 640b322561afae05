import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { TestOptions } from "vitest";
import { type Controller, ownCgroup, v1Root } from "../../services/sandbox/cgroups.js";
import { POSTGRES_ADMIN_URL } from "./postgres.js";

/**
 * Set to 1 by .ci/run: a test whose need this host lacks runs (and fails) instead of skipping, so
 * CI runs every test. Without it `npm test` passes on a machine with Node 20 alone.
 */
export const REQUIRE_ALL = "BRAIN_REQUIRE_ALL_TESTS";

/** The absolute path of `program` in a directory on PATH, as a shell would find it, or undefined. */
export function onPath(program: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this one
    }
  }
  return undefined;
}

const program = (name: string, debianPackage: string) =>
  onPath(name) ? [] : [`${name} is not on PATH (Debian: apt-get install -y ${debianPackage})`];

// the test sandboxes' interpreters are the Debian packages' (test/sandbox/sandbox-service.ts)
const INTERPRETERS = [
  ["/usr/bin/bash", "bash"],
  ["/usr/bin/python3", "python3"],
  ["/usr/bin/node", "nodejs"],
] as const;

function sandboxLacks(): string[] {
  const lacks: string[] = [];
  if (process.getuid?.() !== 0) {
    lacks.push("root (the sandbox service runs code as host users of its own: run the tests as root)");
  }
  lacks.push(...program("bwrap", "bubblewrap"), ...program("prlimit", "util-linux"));
  for (const [path, debianPackage] of INTERPRETERS) {
    if (!existsSync(path)) lacks.push(`${path} is not there (Debian: apt-get install -y ${debianPackage})`);
  }
  return lacks;
}

function cgroupLacks(): string[] {
  const self = existsSync("/proc/self/cgroup") ? readFileSync("/proc/self/cgroup", "utf8") : "";
  const missing = (["memory", "cpu"] as Controller[]).filter((controller) => {
    const own = ownCgroup(self, controller);
    return own === undefined || !existsSync(join(v1Root(controller), own));
  });
  return missing.length === 0
    ? []
    : [
        `a cgroup v1 ${missing.join(" and a cgroup v1 ")} controller (a cgroup v2-only host has none; systemd boots with both on systemd.unified_cgroup_hierarchy=0)`,
      ];
}

function mountLacks(): string[] {
  const mount = spawnSync("unshare", ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], {
    stdio: "ignore",
  });
  return mount.status === 0
    ? []
    : [
        "user namespaces that may mount (`unshare -rm` failed: a container must allow unshare, or run privileged)",
      ];
}

/** The system call numbers of the kernel's headers, which the seccomp filter's are checked against. */
export const KERNEL_HEADER = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h";

/** Debian's nginx lives in /usr/sbin, which a user's PATH may not name. */
export const NGINX = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].find((path) =>
  existsSync(path),
);

/** Whether the tests' PostgreSQL answers, asked of a child process, since a need is answered at once. */
function postgresLacks(): string[] {
  const probe = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import pg from "pg"; const c = new pg.Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
       await c.connect(); await c.query("SELECT 1"); await c.end();`,
      POSTGRES_ADMIN_URL,
    ],
    { cwd: join(import.meta.dirname, "../.."), stdio: "ignore", timeout: 10_000 },
  );
  return probe.status === 0
    ? []
    : [
        `PostgreSQL answering at ${POSTGRES_ADMIN_URL.replace(/\/\/[^@]*@/, "//")} (Debian: apt-get install -y postgresql; BRAIN_TEST_POSTGRES names another server)`,
      ];
}

/** What each kind of test needs of the host beyond Node 20, as what is missing and how to get it. */
const NEEDS = {
  /** Real sandboxes: the sandbox service started for real. */
  sandbox: sandboxLacks,
  /** Real sandboxes in cgroups of their own. */
  cgroups: () => [...sandboxLacks(), ...cgroupLacks()],
  /** A tmpfs mounted in a private mount namespace (a full disk). */
  mount: mountLacks,
  /** The x86_64 kernel headers. */
  kernelHeaders: () =>
    existsSync(KERNEL_HEADER)
      ? []
      : [`${KERNEL_HEADER} is not there (Debian: apt-get install -y linux-libc-dev)`],
  /** Prometheus' own check of the /metrics output. */
  promtool: () => program("promtool", "prometheus"),
  /** Brain on PostgreSQL, and many Brains on one. */
  postgres: postgresLacks,
  /** A real browser for the web console and the client: Debian's chromium, driven by playwright-core. */
  chromium: () => program("chromium", "chromium"),
  /** A pseudo-terminal for `brain chat`: tmux runs it as a person's terminal would. */
  tmux: () => program("tmux", "tmux"),
  /** The example load balancer in front of many Brains on PostgreSQL. */
  loadBalancer: () => [
    ...postgresLacks(),
    ...(NGINX ? [] : ["nginx (Debian: apt-get install -y nginx-light)"]),
  ],
} satisfies Record<string, () => string[]>;

export type HostNeed = keyof typeof NEEDS;

declare module "vitest" {
  interface TaskMeta {
    /** What of the host the test or suite needs: the reporter says why it was skipped. */
    hostNeed?: HostNeed;
  }
}

const found = new Map<HostNeed, string[]>();

/** What this host lacks for `need`, each with how to get it; empty when it has everything. */
export function lacks(need: HostNeed): string[] {
  let lacking = found.get(need);
  if (!lacking) {
    lacking = NEEDS[need]();
    found.set(need, lacking);
  }
  return lacking;
}

/**
 * The options of a `describe` or `it` whose tests need `need`: skipped where the host lacks it
 * (the run then ends with one line saying what is missing, test/helpers/host-needs-reporter.ts),
 * run regardless when REQUIRE_ALL is set.
 */
export function needs(need: HostNeed): TestOptions {
  return { skip: process.env[REQUIRE_ALL] !== "1" && lacks(need).length > 0, meta: { hostNeed: need } };
}
