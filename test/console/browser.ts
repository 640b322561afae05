import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { ROOT } from "../helpers/cli.js";
import { onPath } from "../helpers/host-needs.js";

/** Debian's chromium, headless, driven by playwright-core (needs("chromium") says when it is missing). */
export function launchChromium(): Promise<Browser> {
  const executablePath = onPath("chromium");
  if (!executablePath) throw new Error("chromium is not on PATH (Debian: apt-get install -y chromium)");
  // as root (CI) Chromium refuses to start its own sandbox; the page is ours and loopback-only
  return chromium.launch({ executablePath, headless: true, chromiumSandbox: false });
}

/**
 * Where a browser test keeps what a person looks at afterwards (screenshots): test-artifacts/ in
 * the repository, outside the run's temporary directory, which must be left empty.
 */
export function artifactPath(name: string): string {
  const dir = process.env.BRAIN_TEST_ARTIFACTS ?? join(ROOT, "test-artifacts");
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
