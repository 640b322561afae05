import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";
import { type HostNeed, lacks, REQUIRE_ALL } from "./host-needs.js";

/** The need of a test, its own or the nearest of its suites'. */
function needOf(test: TestCase): HostNeed | undefined {
  let task: TestCase | TestSuite | TestModule = test;
  while (task.type !== "module") {
    const need = task.meta().hostNeed;
    if (need) return need;
    task = task.parent;
  }
  return undefined;
}

/**
 * Ends a run that skipped tests for what the host lacks with one line: how many, what is missing
 * and how to get it. Each test says what it needs with `needs(…)` (host-needs.ts).
 */
export default class HostNeedsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    // nothing was skipped for the host: a test whose beforeAll failed is reported as skipped too
    if (process.env[REQUIRE_ALL] === "1") return;
    let skipped = 0;
    const missing = new Set<string>();
    for (const module of modules) {
      for (const test of module.children.allTests("skipped")) {
        const need = needOf(test);
        if (!need || lacks(need).length === 0) continue;
        skipped++;
        for (const lack of lacks(need)) missing.add(lack);
      }
    }
    if (skipped === 0) return;
    process.stdout.write(
      `Skipped ${skipped} test${skipped === 1 ? "" : "s"} this host cannot run; missing: ${[...missing].join("; ")}. ${REQUIRE_ALL}=1 runs them regardless, as CI does.\n`,
    );
  }
}
