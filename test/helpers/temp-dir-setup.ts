import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const OWNED = "BRAIN_TESTS_TMPDIR";

/**
 * The test run's own temporary directory: every test file and every process it starts gets it as
 * TMPDIR, so what they leave there is theirs alone, whatever else runs on the machine. A run that
 * leaves anything in it fails, naming what was left: each test removes what it makes.
 */
export default function setup(): () => void {
  // each project of the run (vitest.config.ts) sets up; the first one's directory serves them all
  if (process.env[OWNED] !== undefined) return () => {};
  const dir = mkdtempSync(join(tmpdir(), "brain-tests-"));
  process.env[OWNED] = dir;
  // the sandbox's users must pass through it to the state directories the sandbox tests make here
  chmodSync(dir, 0o711);
  process.env.TMPDIR = dir;
  return () => {
    const left = readdirSync(dir);
    rmSync(dir, { recursive: true, force: true });
    if (left.length === 0) return;
    process.stderr.write(
      `The tests left ${left.length} entr${left.length === 1 ? "y" : "ies"} in the temporary directory: ${left.sort().join(", ")}. Each test removes what it makes.\n`,
    );
    // a teardown that throws is only logged: the run must fail
    process.exitCode = 1;
  };
}
