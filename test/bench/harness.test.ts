import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { callgrindTotal } from "../../bench/instructions.js";
import { parseOptions } from "../../bench/options.js";
import { mainThreadCpuSeconds, processCpuSeconds, startNode } from "../../bench/processes.js";
import { renderTable } from "../../bench/report.js";
import { median, percentile, summarize } from "../../bench/stats.js";

describe("bench statistics", () => {
  it("takes nearest-rank percentiles: values that were observed", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it("takes the median of an odd and an even count, NaN of none", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("summarizes unsorted samples", () => {
    expect(summarize([3, 1, 2, 10])).toEqual({ count: 4, p50: 2, p99: 10, mean: 4, max: 10 });
  });
});

describe("bench options", () => {
  it("defaults to the sizes of issue 11", () => {
    const parsed = parseOptions([], {});
    expect(parsed).toMatchObject({
      ok: true,
      options: {
        sets: 1,
        sessions: 1000,
        // unset: each benchmark's own default (throughput 10, instructions 1)
        callsPerTurn: undefined,
        systemChars: 0,
        payloadChars: 0,
        turns: 1000,
        clients: 1000,
        idleSessions: 10_000,
        out: "bench/results.json",
      },
    });
  });

  it("takes flags over BENCH_* variables", () => {
    const parsed = parseOptions(["--duration", "5", "--only", "overhead,fanout", "--sets", "3"], {
      BENCH_DURATION: "9",
      BENCH_CLIENTS: "10",
      BENCH_SETS: "5",
      BENCH_CALLS_PER_TURN: "1",
      BENCH_SYSTEM_CHARS: "20000",
      BENCH_PAYLOAD_CHARS: "4000",
      BENCH_TURNS: "200",
    });
    expect(parsed).toMatchObject({
      ok: true,
      options: {
        durationSeconds: 5,
        clients: 10,
        sets: 3,
        callsPerTurn: 1,
        systemChars: 20_000,
        payloadChars: 4000,
        turns: 200,
        only: ["overhead", "fanout"],
      },
    });
  });

  it("takes the Brain processes' NODE_OPTIONS from the flag over BENCH_BRAIN_NODE_OPTIONS", () => {
    const env = { BENCH_BRAIN_NODE_OPTIONS: "--max-semi-space-size=32" };
    expect(parseOptions([], env)).toMatchObject({
      ok: true,
      options: { brainNodeOptions: "--max-semi-space-size=32" },
    });
    expect(parseOptions(["--brain-node-options=--max-semi-space-size=64"], env)).toMatchObject({
      ok: true,
      options: { brainNodeOptions: "--max-semi-space-size=64" },
    });
    expect(parseOptions([], {})).toMatchObject({ ok: true, options: { brainNodeOptions: undefined } });
    expect(parseOptions(["--brain-node-options="], env)).toMatchObject({
      ok: true,
      options: { brainNodeOptions: undefined },
    });
  });

  it("takes the compared Brains' collector only with --compare, and only a state it knows", () => {
    expect(parseOptions(["--compare", "main", "--collector", "down"], {})).toMatchObject({
      ok: true,
      options: { compare: "main", collector: "down" },
    });
    expect(parseOptions(["--compare", "main"], {})).toMatchObject({
      ok: true,
      options: { collector: undefined },
    });
    expect(parseOptions(["--collector", "500"], {})).toEqual({
      ok: false,
      help: false,
      problem: "--collector: only with --compare",
    });
    expect(parseOptions(["--compare", "main", "--collector", "slow"], {})).toEqual({
      ok: false,
      help: false,
      problem: "--collector: must be one of up, down, 500",
    });
  });

  it("refuses a size that is not a whole number or out of its range, naming the flag and the variable", () => {
    expect(parseOptions(["--sessions", "many"], {})).toEqual({
      ok: false,
      help: false,
      problem: "--sessions (BENCH_SESSIONS): must be an integer ≥ 1",
    });
    expect(parseOptions(["--payload-chars", "5000"], {})).toEqual({
      ok: false,
      help: false,
      problem: "--payload-chars (BENCH_PAYLOAD_CHARS): must be an integer from 0 to 4096",
    });
    expect(parseOptions(["--turns", "10"], {})).toEqual({
      ok: false,
      help: false,
      problem: "--turns (BENCH_TURNS): must be an integer ≥ 50",
    });
    expect(parseOptions(["--bogus"], {})).toMatchObject({ ok: false, help: false });
    expect(parseOptions(["-h"], {})).toEqual({ ok: false, help: true });
  });
});

const MACHINE = {
  cpu: "CPU",
  cores: 2,
  memory_gib: 4,
  free_memory_gib: 2,
  load_average_1m: 0.1,
  os: "linux",
  node: "v20",
  commit: "abc",
};

describe("bench table", () => {
  it("prints each figure with its reference, the ratio and whether the target was met", () => {
    const table = renderTable({
      generated_at: "2026-01-01T00:00:00.000Z",
      machine: MACHINE,
      options: {},
      sections: [
        {
          id: "overhead",
          title: "Overhead",
          params: { calls: 10 },
          figures: [
            {
              name: "p50",
              value: 0.5,
              unit: "ms",
              reference: { name: "raw", value: 0.25 },
              target: { text: "≤ 1 ms", met: true },
            },
            { name: "added", value: 2, unit: "ms", target: { text: "≤ 0.3 ms", met: false } },
          ],
          notes: [],
        },
      ],
      failures: [{ id: "fanout", error: "boom" }],
    });
    expect(table).toContain("2 cores");
    expect(table).toMatch(/p50\s+0\.500 ms\s+raw 0\.250 ms\s+2\.00×\s+≤ 1 ms ✓/);
    expect(table).toMatch(/added\s+2\.00 ms\s+≤ 0\.3 ms ✗ missed/);
    expect(table).toContain("fanout: FAILED — boom");
    expect(table).not.toContain("NODE_OPTIONS");
  });

  it("says which NODE_OPTIONS the Brain processes were started with", () => {
    const table = renderTable({
      generated_at: "2026-01-01T00:00:00.000Z",
      machine: MACHINE,
      options: { brainNodeOptions: "--max-semi-space-size=64" },
      sections: [],
      failures: [],
    });
    expect(table).toContain("Brain processes started with NODE_OPTIONS=--max-semi-space-size=64");
  });
});

describe("bench instruction counts", () => {
  // the head of a dump callgrind_control --dump wrote, as callgrind 3.19 writes it
  const dump = [
    "# callgrind format",
    "version: 1",
    "creator: callgrind-3.19.0",
    "pid: 11954",
    "cmd:  /usr/bin/node --single-threaded dist/src/cli/main.js -config brain.json",
    "part: 1",
    "desc: Trigger: dump",
    "positions: line",
    "events: Ir",
    "summary: 1126868310",
    "ob=(1) /usr/bin/node",
    "fn=(1) main",
    "0 42",
    "totals: 1138048589",
  ].join("\n");

  it("reads a dump's program total from its summary line, as callgrind_annotate does", () => {
    expect(callgrindTotal(dump)).toBe(1_126_868_310);
  });

  it("finds no total in a file that is not a dump", () => {
    expect(callgrindTotal("events: Ir\n0 42\n")).toBeUndefined();
    expect(callgrindTotal("")).toBeUndefined();
  });
});

describe("bench processes", () => {
  it("runs Node under a launcher, with the launcher's arguments before Node's", async () => {
    const child = await startNode({
      root: process.cwd(),
      args: ["-e", "console.log('ready ' + process.env.LAUNCHED); setInterval(() => {}, 1000)"],
      env: {},
      launcher: ["env", "LAUNCHED=by-env"],
      ready: (line) => line.match(/^ready (\S+)$/)?.[1],
    });
    try {
      expect(child.ready).toBe("by-env");
    } finally {
      await child.stop();
    }
  });
});

describe("bench CPU time from /proc", () => {
  it.skipIf(!existsSync("/proc/self/stat"))(
    "counts the main thread's work in both, within the process's",
    () => {
      const before = { all: processCpuSeconds(process.pid), main: mainThreadCpuSeconds(process.pid) };
      const until = performance.now() + 300;
      while (performance.now() < until);
      const main = mainThreadCpuSeconds(process.pid) - before.main;
      const all = processCpuSeconds(process.pid) - before.all;
      // 300 ms of spinning, in clock ticks of 10 ms, on a machine that may be busy
      expect(main).toBeGreaterThanOrEqual(0.1);
      expect(mainThreadCpuSeconds(process.pid)).toBeLessThanOrEqual(processCpuSeconds(process.pid));
      expect(all).toBeGreaterThanOrEqual(main - 0.02);
    },
  );
});
