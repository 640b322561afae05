import { isAbsolute, resolve } from "node:path";
import { type Static, type TString, Type } from "@sinclair/typebox";
import type { ConfigResult as Result } from "../../kit/service-cli.js";
import { envSecrets, loadServiceConfig } from "../../kit/service-config.js";
import { check, compile, defaultsOf, StringEnum } from "../../protocol/validation.js";
import { type Listen, listenOf } from "../../runtime/addresses.js";
import type { Secret } from "../../runtime/secret.js";

const strict = { additionalProperties: false } as const;
const absolutePath = (options: { default?: string; description?: string } = {}): TString =>
  Type.String({ pattern: "^/", description: "An absolute path on the host.", ...options });
const AbsolutePath = absolutePath();
const Seconds = (defaultValue: number, maximum: number, description: string) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum, default: defaultValue, description }));
const Count = (defaultValue: number, minimum: number, maximum: number, description: string) =>
  Type.Optional(Type.Integer({ minimum, maximum, default: defaultValue, description }));

export const LANGUAGES = ["bash", "python", "node"] as const;
export type Language = (typeof LANGUAGES)[number];

const LimitsSchema = Type.Object(
  {
    timeout_seconds: Seconds(30, 86_400, "Wall-clock limit of sandbox_exec when the call gives none."),
    max_timeout_seconds: Seconds(300, 86_400, "The most a sandbox_exec call may ask for."),
    job_timeout_seconds: Seconds(3600, 604_800, "Wall-clock limit of a job started with sandbox_start."),
    cpu_seconds: Count(60, 1, 86_400, "CPU time per process (RLIMIT_CPU)."),
    memory_bytes: Count(536_870_912, 16_777_216, 1_099_511_627_776, "Heap per process (RLIMIT_DATA)."),
    sandbox_memory_bytes: Count(
      1_073_741_824,
      16_777_216,
      1_099_511_627_776,
      "Memory of one run, all its processes and its /tmp and /dev/shm together (a memory cgroup; see memory_cgroup).",
    ),
    max_processes: Count(64, 2, 65_536, "Processes of one workspace at once (RLIMIT_NPROC)."),
    nice: Count(
      10,
      0,
      19,
      "The niceness code runs at: when CPU is short, the service and Brain come first (0 gives code the service's).",
    ),
    max_file_bytes: Count(104_857_600, 0, 1_099_511_627_776, "Largest file code may write (RLIMIT_FSIZE)."),
    max_open_files: Count(256, 16, 65_536, "Open files per process (RLIMIT_NOFILE)."),
    tmp_bytes: Count(67_108_864, 4096, 17_179_869_184, "Size of the private /tmp (and of /dev/shm)."),
    max_output_bytes: Count(65_536, 1024, 16_777_216, "Output kept per stream; the rest is dropped."),
    max_progress_bytes: Count(
      65_536,
      1024,
      1_048_576,
      "Largest progress event; at most Brain's limits.max_progress_bytes.",
    ),
    max_code_bytes: Count(65_536, 1024, 16_777_216, "Largest `code` argument."),
    max_stdin_bytes: Count(1_048_576, 0, 67_108_864, "Largest `stdin` argument."),
    max_read_bytes: Count(262_144, 1024, 16_777_216, "Largest file sandbox_read_file returns."),
    max_write_bytes: Count(1_048_576, 1024, 67_108_864, "Largest file sandbox_write_file writes."),
    max_list_entries: Count(1000, 1, 100_000, "Most entries sandbox_list returns."),
    max_concurrent_runs: Count(16, 1, 4096, "Runs (calls and jobs) at once over all sessions."),
    max_runs_per_tenant: Count(
      8,
      1,
      4096,
      "Runs at once of one tenant's sessions, so that one tenant cannot take every run from the others.",
    ),
    warm_sandboxes: Count(8, 0, 1024, "Sandboxes kept set up for sessions' next calls; 0 makes each afresh."),
    max_jobs_per_session: Count(4, 1, 1024, "Running jobs per session at once."),
    job_retention_seconds: Seconds(600, 604_800, "How long a finished job's status stays readable."),
    workspace_idle_seconds: Seconds(3600, 31_536_000, "A workspace unused this long is removed."),
  },
  strict,
);

const SandboxConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(Type.String({ default: "127.0.0.1:8092", description: "host:port to bind." })),
    token_env: Type.String({
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      description: "The environment variable holding the bearer token Brain sends (the binding's token_env).",
    }),
    state_dir: Type.Optional(
      Type.String({ minLength: 1, default: "./data/sandbox", description: "Where workspaces live." }),
    ),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
    bwrap: Type.Optional({
      ...AbsolutePath,
      default: "/usr/bin/bwrap",
      description: "The bubblewrap binary.",
    }),
    prlimit: Type.Optional({
      ...AbsolutePath,
      default: "/usr/bin/prlimit",
      description: "util-linux's prlimit.",
    }),
    languages: Type.Object(
      {
        bash: Type.Optional(AbsolutePath),
        python: Type.Optional(AbsolutePath),
        node: Type.Optional(AbsolutePath),
      },
      {
        ...strict,
        description: "The interpreter of each language code may be written in; no other is reachable.",
      },
    ),
    programs: Type.Optional(
      Type.Array(AbsolutePath, {
        maxItems: 1000,
        description: "Other programs code can run (coreutils and the like); missing ones are skipped.",
      }),
    ),
    system_paths: Type.Optional(
      Type.Array(AbsolutePath, {
        maxItems: 1000,
        description: "Host files and directories mounted read-only (libraries); missing ones are skipped.",
      }),
    ),
    seccomp: Type.Optional(
      StringEnum(["default", "off"], {
        default: "default",
        description:
          "`default` refuses code the system calls of seccomp.ts (other processes, keyrings, namespaces and mounts, " +
          "BPF, io_uring, perf and the like) with EPERM; on x86_64 only, elsewhere there is none.",
      }),
    ),
    memory_cgroup: Type.Optional(
      Type.String({
        minLength: 1,
        default: "auto",
        description:
          "Where each run gets a cgroup v1 memory limit of limits.sandbox_memory_bytes: a memory cgroup " +
          "directory the service may make cgroups in, `auto` (the service's own memory cgroup, when it can " +
          "write there; otherwise runs are limited per process only, and the service says so at start), or `off`.",
      }),
    ),
    cpu_cgroup: Type.Optional(
      Type.String({
        minLength: 1,
        default: "auto",
        description:
          "Where each run gets a cgroup v1 cpu cgroup, under one per tenant, so that each tenant gets the same " +
          "share of the CPU however many runs and processes it has: as memory_cgroup, `auto`, `off` or a directory.",
      }),
    ),
    sandbox_uids: Type.Optional(
      Type.Object(
        {
          first: Type.Integer({ minimum: 1000, maximum: 4_000_000_000 }),
          count: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
        },
        { ...strict, description: "Host user ids for workspaces: one each, so their limits stay apart." },
      ),
    ),
    limits: Type.Optional(LimitsSchema),
  },
  { ...strict, title: "Sandbox service config" },
);

type RawConfig = Static<typeof SandboxConfigSchema>;
export type Limits = Required<Static<typeof LimitsSchema>>;

export const DEFAULT_LIMITS: Limits = defaultsOf(LimitsSchema);

/** Programs bash code usually needs; each is mounted only if the host has it. */
// biome-ignore format: a list of names reads best packed
export const DEFAULT_PROGRAMS = [
  "awk", "base64", "basename", "cat", "chmod", "cmp", "cp", "cut", "date", "diff", "dirname", "du", "echo",
  "env", "expr", "false", "find", "grep", "gzip", "head", "id", "ln", "ls", "md5sum", "mkdir", "mkfifo", "mktemp", "mv",
  "nproc", "od", "paste", "printf", "pwd", "readlink", "realpath", "rm", "rmdir", "sed", "seq", "sh",
  "sha256sum", "sleep", "sort", "stat", "tail", "tar", "tee", "test", "timeout", "touch", "tr", "true",
  "uname", "uniq", "wc", "xargs", "yes",
].map((name) => `/usr/bin/${name}`);

/**
 * Data every program may read. Not /usr/lib: the libraries the interpreters and programs need are
 * found at start and mounted alone, so the host's other runtimes there stay out of reach.
 */
export const DEFAULT_SYSTEM_PATHS = ["/usr/lib/locale", "/usr/share", "/etc/ld.so.cache", "/etc/localtime"];

export interface SandboxConfig {
  listen: Listen;
  token: Secret;
  /** The environment variable the token came from, for messages. */
  tokenEnv: string;
  stateDir: string;
  logLevel: string;
  bwrap: string;
  prlimit: string;
  languages: ReadonlyMap<Language, string>;
  programs: readonly string[];
  systemPaths: readonly string[];
  uids: { first: number; count: number };
  seccomp: "default" | "off";
  /** "auto", "off", or the cgroup directory to make runs' memory cgroups in. */
  memoryCgroup: string;
  /** The same for their cpu cgroups. */
  cpuCgroup: string;
  limits: Limits;
}

export type ConfigResult = Result<SandboxConfig>;

const validate = compile<RawConfig>(SandboxConfigSchema);

/** Validate a parsed config and resolve defaults and the token; every problem is reported. Pure. */
export function resolveSandboxConfig(raw: unknown, env: NodeJS.ProcessEnv, baseDir: string): ConfigResult {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const config = checked.value;
  const problems: string[] = [];
  const listen = listenOf(config.listen ?? "127.0.0.1:8092", problems);
  const token = envSecrets(env, problems)("token_env", config.token_env, "the token Brain sends");
  const languages = new Map<Language, string>();
  for (const language of LANGUAGES) {
    const path = config.languages[language];
    if (path !== undefined) languages.set(language, path);
  }
  if (languages.size === 0) problems.push("languages: name at least one interpreter (bash, python or node)");
  const limits: Limits = { ...DEFAULT_LIMITS, ...config.limits };
  if (limits.timeout_seconds > limits.max_timeout_seconds) {
    problems.push("limits.timeout_seconds: must not exceed limits.max_timeout_seconds");
  }
  const memoryCgroup = config.memory_cgroup ?? "auto";
  const cpuCgroup = config.cpu_cgroup ?? "auto";
  for (const [field, setting] of [
    ["memory_cgroup", memoryCgroup],
    ["cpu_cgroup", cpuCgroup],
  ] as const) {
    if (setting !== "auto" && setting !== "off" && !isAbsolute(setting)) {
      problems.push(`${field}: must be "auto", "off", or the absolute path of a cgroup directory`);
    }
  }
  if (!listen || !token || problems.length > 0) return { ok: false, problems };
  const stateDir = config.state_dir ?? "./data/sandbox";
  return {
    ok: true,
    config: {
      listen,
      token,
      tokenEnv: config.token_env,
      stateDir: isAbsolute(stateDir) ? stateDir : resolve(baseDir, stateDir),
      logLevel: config.log_level ?? "info",
      bwrap: config.bwrap ?? "/usr/bin/bwrap",
      prlimit: config.prlimit ?? "/usr/bin/prlimit",
      languages,
      programs: config.programs ?? DEFAULT_PROGRAMS,
      systemPaths: config.system_paths ?? DEFAULT_SYSTEM_PATHS,
      uids: config.sandbox_uids ?? { first: 100_000, count: 10_000 },
      seccomp: config.seccomp ?? "default",
      memoryCgroup,
      cpuCgroup,
      limits,
    },
  };
}

export function loadSandboxConfig(path: string, env: NodeJS.ProcessEnv = process.env): ConfigResult {
  return loadServiceConfig(path, env, resolveSandboxConfig);
}
