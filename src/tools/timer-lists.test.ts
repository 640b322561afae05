import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const built = pathToFileURL(resolve("dist/src/tools/timer-lists.js")).href;

/**
 * Runs `body` in a Node process of its own that can read Node's timer lists (`--expose-internals`),
 * and returns what it printed: a process of its own so that it ends only when nothing holds it.
 */
function inNode(body: string): string {
  const script = `
    import { TimerLists } from ${JSON.stringify(built)};
    import { createRequire } from "node:module";
    const { timerListMap } = createRequire(import.meta.url)("internal/timers");
    const lists = () => Object.keys(timerListMap).join(",");
    ${body}
  `;
  return execFileSync(process.execPath, ["--expose-internals", "--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 10_000,
  }).trim();
}

describe("TimerLists", () => {
  it("keeps the list of a duration once its last timer is cleared, where Node drops it", () => {
    const printed = inNode(`
      const kept = new TimerLists();
      kept.keep(4321);
      clearTimeout(setTimeout(() => {}, 4321));
      clearTimeout(setTimeout(() => {}, 1234));
      console.log(lists());
      // closed, the list goes with the next timer of its duration cleared, as without it
      kept.close();
      clearTimeout(setTimeout(() => {}, 4321));
      console.log(lists() || "none");
    `);
    expect(printed.split("\n")).toEqual(["4321", "none"]);
  });

  it("holds no process open, and a timer of a kept duration still fires once", () => {
    const printed = inNode(`
      const kept = new TimerLists();
      kept.keep(20);
      kept.keep(20);
      kept.keep(600000);
      let fired = 0;
      setTimeout(() => fired++, 20);
      setTimeout(() => console.log("fired " + fired), 100);
    `);
    expect(printed).toBe("fired 1");
  });
});
