import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, runBrain } from "../helpers/cli.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "../helpers/processes.js";
import { type LocalTools, runLocalToolsCli, startLocalTools } from "./local-tools-process.js";

// The README's "Local tools & approvals" path, as a user runs it: local-tools, a host config
// from `brain tools config`, Brain from that file, and examples/session.mjs.
let tools: LocalTools;
let brain: StartedProcess & { ready: string };
let dir: string;
const API_KEY = "session-example-key-0c1d2e";

beforeAll(async () => {
  tools = await startLocalTools();
  dir = mkdtempSync(join(tmpdir(), "session-example-"));
  const generated = runBrain(
    ["tools", "config", tools.url, "--token-env", "LOCAL_TOOLS_KEY", "--listen", "127.0.0.1:0"],
    tools.env,
  );
  expect(generated.code).toBe(0);
  writeFileSync(join(dir, "brain.json"), generated.stdout);
  brain = await startProcess(
    ["dist/src/cli/main.js", "-config", join(dir, "brain.json")],
    { BRAIN_API_KEY: API_KEY, LOCAL_TOOLS_KEY: tools.token },
    brainUrlFromLog,
  );
});
afterAll(async () => {
  await brain?.stop();
  await tools?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("runs a session with BRAIN_TOOLS, printing events live; the operator answers from the CLI", async () => {
  const child = spawn(process.execPath, ["examples/session.mjs", "ship", "it"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      BRAIN_URL: brain.ready,
      BRAIN_API_KEY: API_KEY,
      BRAIN_TOOLS: "echo,wait,ask_approval",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let answered = false;
  createInterface({ input: child.stderr }).on("line", (line) => lines.push(line));
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    const id = /main\.js answer (apr_\S+) yes/.exec(line)?.[1];
    if (id && !answered) {
      answered = true;
      const answer = runLocalToolsCli(
        ["answer", id, "yes", "--config", tools.configPath, "--url", tools.url],
        tools.env,
      );
      lines.push(`[test] ${answer.stdout}${answer.stderr}`);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const output = lines.join("\n");
  expect(code, output).toBe(0);
  expect(output).toMatch(/tool\.result +echo ok → "ship it"/);
  expect(output).toMatch(/~ tool\.progress +wait \{"elapsed_seconds":1/);
  expect(output).toMatch(/tool\.result +wait ok → "Waited 3 seconds\."/);
  expect(output).toMatch(/~ tool\.progress +ask_approval \{"status":"waiting_for_operator"/);
  expect(output).toMatch(/tool\.result +ask_approval ok → "Operator answered yes\."/);
  expect(output).toContain("Done. The last tool answered: Operator answered yes.");
  expect(output).toMatch(/session \S+ closed/);
});
