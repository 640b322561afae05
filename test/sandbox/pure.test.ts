import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CappedOutput } from "../../services/sandbox/capped-output.js";
import { oomKillsOf, ownCgroup, sharesAtNice } from "../../services/sandbox/cgroups.js";
import { probeAdvice } from "../../services/sandbox/probe.js";
import { type OutputProgress, ProgressBatcher } from "../../services/sandbox/progress-batcher.js";
import { describeEnd, runText } from "../../services/sandbox/result-text.js";
import { displayPath, workspacePath } from "../../services/sandbox/workspace-path.js";
import { workspaceName } from "../../services/sandbox/workspaces.js";

describe("workspacePath", () => {
  it("accepts paths relative to the workspace or under /workspace", () => {
    expect(workspacePath("a/b.txt")).toEqual(["a", "b.txt"]);
    expect(workspacePath("./a//b/")).toEqual(["a", "b"]);
    expect(workspacePath("/workspace/a")).toEqual(["a"]);
    expect(workspacePath("/workspace")).toEqual([]);
    expect(workspacePath("")).toEqual([]);
    expect(workspacePath(".")).toEqual([]);
    expect(workspacePath("..a/b..")).toEqual(["..a", "b.."]);
  });

  it.each([
    ["..", /contains ".."/],
    ["a/../../etc", /contains ".."/],
    ["/etc/passwd", /outside the workspace/],
    ["/workspacex/a", /outside the workspace/],
    ["/workspace/../x", /contains ".."/],
    ["a\0b", /NUL/],
    [`${"n".repeat(256)}`, /longer than 255/],
    [`${"a/".repeat(2049)}`, /longer than 4096/],
  ])("refuses %j", (path, message) => {
    expect(() => workspacePath(path)).toThrow(message);
    try {
      workspacePath(path);
    } catch (error) {
      expect((error as { code: string }).code).toBe("invalid_path");
    }
  });

  it("shows paths relative to the workspace", () => {
    expect(displayPath([])).toBe(".");
    expect(displayPath(["a", "b"])).toBe("a/b");
  });
});

describe("workspaceName", () => {
  it("is a digest of both ids, so neither can shape a path or collide with the other's", () => {
    const name = workspaceName({ tenantId: "../..", sessionId: "/etc" });
    expect(name).toMatch(/^[0-9a-f]{32}$/);
    expect(workspaceName({ tenantId: "a", sessionId: "bc" })).not.toBe(
      workspaceName({ tenantId: "ab", sessionId: "c" }),
    );
  });
});

describe("CappedOutput", () => {
  it("keeps the first `limit` bytes, counts the rest and flags truncation", () => {
    const output = new CappedOutput(5);
    expect(output.push(Buffer.from("abc"))).toBe("abc");
    expect(output.push(Buffer.from("defgh"))).toBe("de");
    expect(output.push(Buffer.from("ij"))).toBe("");
    expect(output.text()).toBe("abcde");
    expect(output.truncated).toBe(true);
  });

  it("decodes UTF-8 across chunk boundaries and marks a character cut at the limit", () => {
    const output = new CappedOutput(5);
    const euro = Buffer.from("€€");
    expect(output.push(euro.subarray(0, 2))).toBe("");
    expect(output.push(euro.subarray(2))).toBe("€");
    expect(output.text()).toBe("€\uFFFD");
    expect(new CappedOutput(10).truncated).toBe(false);
  });
});

describe("ProgressBatcher", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("joins writes of one stream until the interval, and flushes when the stream changes", () => {
    const sent: OutputProgress[] = [];
    const batcher = new ProgressBatcher((progress) => sent.push(progress), 50, 100);
    batcher.push("stdout", "a");
    batcher.push("stdout", "b");
    expect(sent).toEqual([]);
    batcher.push("stderr", "c");
    expect(sent).toEqual([{ stream: "stdout", text: "ab" }]);
    vi.advanceTimersByTime(50);
    expect(sent).toEqual([
      { stream: "stdout", text: "ab" },
      { stream: "stderr", text: "c" },
    ]);
  });

  it("splits long output into events of at most maxChars, never inside a surrogate pair", () => {
    const sent: OutputProgress[] = [];
    const batcher = new ProgressBatcher((progress) => sent.push(progress), 50, 4);
    batcher.push("stdout", "abc😀defgh");
    batcher.flush();
    expect(sent.map((progress) => progress.text)).toEqual(["abc", "😀de", "fgh"]);
    expect(sent.every((progress) => progress.text.length <= 4)).toBe(true);
  });
});

describe("result text", () => {
  it("names how a run ended, with the signal behind a high exit code", () => {
    const facts = {
      exitCode: 0,
      timedOut: false,
      durationMs: 10,
      timeoutMs: 1000,
      cpuSeconds: 2,
      outOfMemory: false,
      sandboxMemoryBytes: 96 * 1024 ** 2,
    };
    expect(describeEnd(facts)).toBe("exit code 0");
    expect(describeEnd({ ...facts, exitCode: 152 })).toBe("exit code 152 (SIGXCPU: CPU time limit reached)");
    expect(describeEnd({ ...facts, exitCode: 153 })).toBe("exit code 153 (SIGXFSZ: file size limit reached)");
    expect(describeEnd({ ...facts, exitCode: null, timedOut: true, timeoutMs: 2500 })).toMatch(
      /^killed at the wall-clock limit of 2.5 s/,
    );
    // pid 1 meets the CPU limit as SIGKILL; only a run as long as the limit can have
    expect(describeEnd({ ...facts, exitCode: 137 })).toBe("exit code 137 (SIGKILL: killed)");
    expect(describeEnd({ ...facts, exitCode: 137, durationMs: 2100 })).toBe(
      "exit code 137 (SIGKILL: the CPU time limit of 2 s)",
    );
    // the kernel may kill a child and leave the program to carry on: said whatever the exit code
    expect(describeEnd({ ...facts, exitCode: 137, outOfMemory: true })).toBe(
      "exit code 137 (SIGKILL: killed); out of memory: the kernel killed a process of it at the sandbox's memory limit of 96 MiB",
    );
    expect(describeEnd({ ...facts, outOfMemory: true })).toMatch(/^exit code 0; out of memory/);
  });

  it("shows each stream that has output and says when output was cut", () => {
    const base = { exit_code: 0, duration_ms: 5, truncated: false };
    expect(runText({ ...base, stdout: "", stderr: "" }, "exit code 0", 10)).toBe(
      "exit code 0, 5 ms\n(no output)",
    );
    expect(runText({ ...base, stdout: "o", stderr: "e", truncated: true }, "exit code 0", 10)).toBe(
      "exit code 0, 5 ms\n--- stdout ---\no\n--- stderr ---\ne\n[output truncated: each stream keeps its first 10 bytes]",
    );
  });
});

describe("probe advice", () => {
  it("points at user namespaces when bwrap cannot create them", () => {
    expect(probeAdvice("bwrap: No permissions to creating new namespace")).toMatch(
      /unprivileged_userns_clone/,
    );
    expect(probeAdvice("bwrap: execvp /usr/bin/x: No such file or directory")).toMatch(
      /apt-get install -y bubblewrap/,
    );
  });
});

describe("cgroups", () => {
  it("finds the service's own cgroup in the v1 memory hierarchy, whatever else shares the line", () => {
    const text = [
      "12:pids:/user.slice",
      "4:memory:/process_api/9fb5",
      "1:cpu:/",
      "0::/user.slice/session-1.scope",
    ].join("\n");
    expect(ownCgroup(text, "memory")).toBe("/process_api/9fb5");
    expect(ownCgroup(text, "cpu")).toBe("/");
    expect(ownCgroup("7:cpu,memory:/a:b\n", "cpu")).toBe("/a:b");
    // cgroup v2 only: memory has no hierarchy of its own
    expect(ownCgroup("0::/init.scope\n", "memory")).toBeUndefined();
  });

  it("weighs all runs together as the kernel weighs one process at their niceness", () => {
    // the kernel's sched_prio_to_weight: 1024 at nice 0, 110 at 10, 15 at 19
    expect([0, 10, 19].map(sharesAtNice)).toEqual([1024, 110, 15]);
  });

  it("reads how many processes the OOM killer ended", () => {
    expect(oomKillsOf("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")).toBe(3);
    expect(oomKillsOf("oom_kill_disable 0\nunder_oom 0\n")).toBe(0);
  });
});
