import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

// static imports and re-exports (with or without bindings) and dynamic import()
const SPECIFIER = /(?:(?:^|\n)\s*(?:import|export)\s(?:[^;]*?\sfrom\s*)?|\bimport\(\s*)"([^"]+)"/g;

/** Every file of ours that `entry` loads, transitively, as paths from the repository root. */
function loadedFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(join(ROOT, file), "utf8");
    for (const [, specifier] of source.matchAll(SPECIFIER)) {
      if (!specifier?.startsWith(".")) continue;
      visit(relative(ROOT, join(ROOT, dirname(file), specifier)).replace(/\.js$/, ".ts"));
    }
  };
  visit(entry);
  return seen;
}

describe("the tool kit", () => {
  it("loads none of Brain's server code: only the protocol's shared pure modules", () => {
    const loaded = [...loadedFiles("kit/index.ts")];
    // the kit is the whole of kit/ plus what it shares with Brain about the protocol itself
    expect(loaded.filter((file) => file.startsWith("kit/")).length).toBeGreaterThan(5);
    const shared = loaded.filter((file) => !file.startsWith("kit/")).sort();
    for (const file of shared) {
      expect(file).toMatch(
        /^src\/(config\/(schema|json-file|json-syntax)|tools\/(result|tool-schemas)|validation|did-you-mean|secret|json-depth)\.ts$/,
      );
    }
    expect(shared).toContain("src/tools/result.ts");
  });
});
