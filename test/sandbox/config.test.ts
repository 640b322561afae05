import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, resolveSandboxConfig } from "../../services/sandbox/config.js";
import { startSandboxService } from "../../services/sandbox/service.js";
import { runNode } from "../helpers/cli.js";
import { needs } from "../helpers/host-needs.js";
import { testConfig } from "./sandbox-service.js";

const env = { SANDBOX_TEST_TOKEN: "t0ken-for-config-tests" };
const dir = mkdtempSync(join(tmpdir(), "sandbox-config-"));
chmodSync(dir, 0o711);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minimal = { token_env: "SANDBOX_TEST_TOKEN", languages: { bash: "/usr/bin/bash" } };

describe("the sandbox config", () => {
  it("fills in defaults and resolves state_dir against the config's directory", () => {
    const resolved = resolveSandboxConfig(minimal, env, "/etc/brain");
    if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
    expect(resolved.config).toMatchObject({
      listen: { host: "127.0.0.1", port: 8092 },
      stateDir: "/etc/brain/data/sandbox",
      bwrap: "/usr/bin/bwrap",
      prlimit: "/usr/bin/prlimit",
      uids: { first: 100_000, count: 10_000 },
      memoryCgroup: "auto",
      limits: DEFAULT_LIMITS,
    });
    expect([...resolved.config.languages]).toEqual([["bash", "/usr/bin/bash"]]);
    // the token is held as a secret: it never serializes
    expect(JSON.stringify(resolved.config)).not.toContain(env.SANDBOX_TEST_TOKEN);
  });

  it("reports every problem with its path", () => {
    const resolved = resolveSandboxConfig(
      {
        token_env: "UNSET_VARIABLE",
        listen: "nowhere",
        languages: { ruby: "/usr/bin/ruby" },
        limits: { timeout_seconds: 100, max_timeout_seconds: 10, max_processes: 1 },
      },
      env,
      dir,
    );
    expect(resolved.ok).toBe(false);
    if (resolved.ok) return;
    expect(resolved.problems).toEqual([
      "languages.ruby: unknown field",
      "limits.max_processes: must be >= 2",
    ]);
    const semantic = resolveSandboxConfig(
      {
        ...minimal,
        token_env: "UNSET_VARIABLE",
        listen: "nowhere",
        languages: {},
        memory_cgroup: "sometimes",
        limits: { timeout_seconds: 100, max_timeout_seconds: 10 },
      },
      env,
      dir,
    );
    expect(semantic.ok ? [] : semantic.problems).toEqual([
      "listen: must be host:port with a port from 0 to 65535",
      "token_env: set the environment variable UNSET_VARIABLE to the token Brain sends",
      "languages: name at least one interpreter (bash, python or node)",
      "limits.timeout_seconds: must not exceed limits.max_timeout_seconds",
      'memory_cgroup: must be "auto", "off", or the absolute path of a cgroup directory',
    ]);
  });
});

/** Run the built sandbox command to completion. */
function runSandbox(args: string[], extraEnv: Record<string, string> = {}) {
  return runNode("dist/services/sandbox/main.js", args, extraEnv);
}

describe("the sandbox command", () => {
  const write = (name: string, config: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(config));
    return path;
  };

  it("explains itself with --help", () => {
    const result = runSandbox(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/sandbox_exec/);
    expect(result.stdout).toMatch(/-check/);
  });

  it("checks a config without starting: valid, or every problem on its own line", () => {
    const good = write("good.json", testConfig(join(dir, "state"), 150_000));
    expect(runSandbox(["-config", good, "-check"], env)).toMatchObject({
      code: 0,
      stdout: `${good}: valid (bash, python, node)\n`,
    });
    // outside /tmp, which the sandbox has its own of
    const outside = mkdtempSync("/var/tmp/sandbox-config-");
    const bad = write("bad.json", {
      ...testConfig(join(outside, "state"), 150_000),
      languages: { python: "/nonexistent/python3" },
      system_paths: ["/usr/lib", outside, "/tmp", "/usr/bin"],
    });
    const result = runSandbox(["--config", bad, "--check"], env);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual([
      `${bad}: languages.python: /nonexistent/python3 is not an executable file on this host`,
      `${bad}: system_paths: ${outside} would expose ${join(outside, "state")} to sandboxed code`,
      `${bad}: system_paths: /tmp would cover the sandbox's own /tmp`,
      `${bad}: system_paths: /usr/bin overlaps /usr/bin, where only the listed programs appear; list them in programs`,
    ]);
    rmSync(outside, { recursive: true, force: true });
    const missing = runSandbox(["-config", join(dir, "none.json"), "-check"], env);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toMatch(/cannot read .*none\.json: ENOENT/);
  });
});

describe("the start check", needs("sandbox"), () => {
  const start = (overrides: Record<string, unknown>) => {
    const resolved = resolveSandboxConfig(testConfig(join(dir, "state"), 150_100, overrides), env, dir);
    if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
    return startSandboxService(resolved.config, { logger: pino({ level: "silent" }) });
  };

  it("refuses to start without bubblewrap, saying how to install it", async () => {
    await expect(start({ bwrap: "/nonexistent/bwrap" })).rejects.toThrow(
      /bwrap is not at \/nonexistent\/bwrap: install bubblewrap \(Debian: apt-get install -y bubblewrap\)/,
    );
  });

  it("refuses to start when bubblewrap cannot make a sandbox here, saying why", async () => {
    // a host without user namespaces answers as this stand-in does
    const fake = join(dir, "bwrap");
    writeFileSync(
      fake,
      "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    );
    chmodSync(fake, 0o755);
    await expect(start({ bwrap: fake })).rejects.toThrow(
      /bubblewrap could not start a sandbox on this host.*\n.*user namespaces/,
    );
  });

  it("refuses to start when an interpreter does not run inside", async () => {
    await expect(start({ languages: { python: "/usr/bin/bash" } })).rejects.toThrow(
      /the python interpreter \(\/usr\/bin\/bash\) does not run in the sandbox/,
    );
  });
});
