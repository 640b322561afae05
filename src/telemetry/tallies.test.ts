import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { TallyCounter, TallyHistogram } from "./tallies.js";

const BOUNDS = [0.001, 0.01, 0.1, 1];
const SAMPLES: [string, number][] = [
  ["echo", 0.0004],
  ["echo", 0.001],
  ["lookup", 0.05],
  ["echo", 0.3],
  ["lookup", 7],
];

describe("tallies", () => {
  it("scrape as prom-client's own counter and histogram do, labelled or not", async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const theirCalls = new Counter({
      name: "calls_total",
      help: "Calls.",
      labelNames: ["tool", "outcome"] as const,
      registers: [theirs],
    });
    const theirSeconds = new Histogram({
      name: "call_seconds",
      help: "Call time.",
      labelNames: ["tool"] as const,
      buckets: BOUNDS,
      registers: [theirs],
    });
    const theirBytes = new Counter({ name: "bytes_total", help: "Bytes.", registers: [theirs] });
    const theirAppends = new Histogram({
      name: "append_seconds",
      help: "Appends.",
      buckets: BOUNDS,
      registers: [theirs],
    });
    const ourCalls = new TallyCounter<"tool" | "outcome">("calls_total", "Calls.", ["tool", "outcome"], ours);
    const ourSeconds = new TallyHistogram<"tool">("call_seconds", "Call time.", ["tool"], BOUNDS, ours);
    const ourBytes = new TallyCounter("bytes_total", "Bytes.", [], ours);
    const ourAppends = new TallyHistogram("append_seconds", "Appends.", [], BOUNDS, ours);
    for (const [tool, seconds] of SAMPLES) {
      const outcome = seconds > 1 ? "timeout" : "ok";
      theirCalls.inc({ tool, outcome });
      ourCalls.inc({ tool, outcome });
      theirSeconds.observe({ tool }, seconds);
      ourSeconds.observe({ tool }, seconds);
      theirBytes.inc(100);
      ourBytes.inc(100);
      theirAppends.observe(seconds);
      ourAppends.observe(seconds);
    }
    theirCalls.inc({ tool: "echo", outcome: "ok" }, 5);
    ourCalls.inc({ tool: "echo", outcome: "ok" }, 5);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("keep label values apart that would run together in a key", async () => {
    const registry = new Registry();
    const calls = new TallyCounter<"a" | "b">("calls_total", "Calls.", ["a", "b"], registry);
    calls.inc({ a: "x", b: "yz" });
    calls.inc({ a: "xy", b: "z" });
    expect(await registry.metrics()).toContain('calls_total{a="x",b="yz"} 1');
    expect(await registry.metrics()).toContain('calls_total{a="xy",b="z"} 1');
  });
});
