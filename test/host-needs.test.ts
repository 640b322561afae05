import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";
import { REQUIRE_ALL } from "./helpers/host-needs.js";

const shadows = mkdtempSync(join(tmpdir(), "brain-path-"));
afterAll(() => rmSync(shadows, { recursive: true, force: true }));

/** PATH as it is, but each directory holding `program` stands in as a copy of links without it. */
function pathWithout(program: string): string {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .map((dir, i) => {
      if (!existsSync(join(dir, program))) return dir;
      const shadow = join(shadows, String(i));
      mkdirSync(shadow);
      for (const entry of readdirSync(dir))
        if (entry !== program) symlinkSync(join(dir, entry), join(shadow, entry));
      return shadow;
    })
    .join(delimiter);
}

const PATH_WITHOUT_BWRAP = pathWithout("bwrap");

/** `npx vitest run FILES` as a person would type it, on a PATH without bubblewrap. */
function vitestWithoutBwrap(files: string[], env: Record<string, string> = {}) {
  const result = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", ...files],
    {
      cwd: ROOT,
      env: { PATH: PATH_WITHOUT_BWRAP, HOME: process.env.HOME ?? ROOT, NO_COLOR: "1", ...env },
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

const SANDBOX_FILES = ["test/sandbox/runs.test.ts", "test/sandbox/conformance.test.ts"];

describe("tests that need what a plain Node 20 machine lacks", () => {
  it("skip without bubblewrap, the run ending with one line that says what is missing and how to get it", () => {
    const { code, output } = vitestWithoutBwrap(SANDBOX_FILES);
    expect(code, output).toBe(0);
    const lines = output.split("\n").filter((line) => line.startsWith("Skipped "));
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Skipped \d+ tests this host cannot run; missing: .*bwrap is not on PATH \(Debian: apt-get install -y bubblewrap\)/,
    );
    expect(lines[0]).toContain(`${REQUIRE_ALL}=1 runs them regardless`);
  });

  it(`run and fail without bubblewrap when ${REQUIRE_ALL}=1, as in CI`, () => {
    const { code, output } = vitestWithoutBwrap(SANDBOX_FILES, { [REQUIRE_ALL]: "1" });
    expect(code, output).toBe(1);
    expect(output).toContain("bwrap is not at /nonexistent/bwrap-is-not-on-PATH: install bubblewrap");
    expect(output).not.toMatch(/^Skipped /m);
  });
});
