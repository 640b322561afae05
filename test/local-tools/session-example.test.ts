import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, runBrain } from "../helpers/cli.js";
import { closedPort } from "../helpers/ports.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "../helpers/processes.js";
import { startFakeModelServer } from "../providers/fake-model-server.js";
import { openAIReply } from "../providers/fake-openai.js";
import { type LocalTools, runLocalToolsCli, startLocalTools } from "./local-tools-process.js";

// The README's "Local tools & approvals" path, as a user runs it: local-tools, a host config
// from `brain tools config`, Brain from that file, and examples/session.mjs.
let tools: LocalTools;
let brain: StartedProcess & { ready: string };
let dir: string;
const API_KEY = "session-example-key-0c1d2e";

/**
 * Brain from a host config that `brain tools config` wrote for the service, listening at `listen`,
 * with `models` added to its own.
 */
function startBrainAt(listen: string, name: string, models: Record<string, unknown>[] = []) {
  const generated = runBrain(
    [
      "tools",
      "config",
      tools.url,
      "--token-env",
      "LOCAL_TOOLS_KEY",
      "--listen",
      listen,
      "--store",
      `./${name}.db`,
    ],
    tools.env,
  );
  expect(generated.code).toBe(0);
  const config = JSON.parse(generated.stdout);
  config.models.push(...models);
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(config));
  return startProcess(
    ["dist/src/cli/main.js", "-config", join(dir, `${name}.json`)],
    { BRAIN_API_KEY: API_KEY, LOCAL_TOOLS_KEY: tools.token },
    brainUrlFromLog,
  );
}

/** Run examples/session.mjs to its end, handing each line it prints to `onLine` as it comes. */
async function runExample(env: Record<string, string>, onLine: (line: string) => void = () => {}) {
  const child = spawn(process.execPath, ["examples/session.mjs", "ship", "it"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", BRAIN_API_KEY: API_KEY, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  for (const input of [child.stdout, child.stderr]) {
    createInterface({ input }).on("line", (line) => {
      lines.push(line);
      onLine(line);
    });
  }
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, lines, output: lines.join("\n") };
}

beforeAll(async () => {
  tools = await startLocalTools();
  dir = mkdtempSync(join(tmpdir(), "session-example-"));
  brain = await startBrainAt("127.0.0.1:0", "brain");
});
afterAll(async () => {
  await brain?.stop();
  await tools?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("runs a session with BRAIN_TOOLS, printing events live; the operator answers from the CLI", async () => {
  const answers: string[] = [];
  const { code, output } = await runExample(
    { BRAIN_URL: brain.ready, BRAIN_TOOLS: "echo,wait,ask_approval" },
    (line) => {
      const id = /main\.js answer (apr_\S+) yes/.exec(line)?.[1];
      if (id && answers.length === 0) {
        const answer = runLocalToolsCli(
          ["answer", id, "yes", "--config", tools.configPath, "--url", tools.url],
          tools.env,
        );
        answers.push(`[test] ${answer.stdout}${answer.stderr}`);
      }
    },
  );
  expect(code, `${output}\n${answers.join("\n")}`).toBe(0);
  expect(output).toMatch(/tool\.result +echo ok → "ship it"/);
  expect(output).toMatch(/~ tool\.progress +wait \{"elapsed_seconds":1/);
  expect(output).toMatch(/tool\.result +wait ok → "Waited 3 seconds\."/);
  expect(output).toMatch(/~ tool\.progress +ask_approval \{"status":"waiting_for_operator"/);
  expect(output).toMatch(/tool\.result +ask_approval ok → "Operator answered yes\."/);
  expect(output).toContain("Done. The last tool answered: Operator answered yes.");
  expect(output).toMatch(/session \S+ closed/);
});

it("waits for a Brain that is still starting, as the README starts it in the background", async () => {
  const listen = `127.0.0.1:${await closedPort()}`;
  let late: Promise<StartedProcess> | undefined;
  const run = runExample({ BRAIN_URL: `http://${listen}`, BRAIN_TOOLS: "echo" }, (line) => {
    // Brain starts only once the example has found nothing listening
    if (line.startsWith("waiting up to 10 s for Brain")) late ??= startBrainAt(listen, "late");
  });
  try {
    const { code, output } = await run;
    expect(code, output).toBe(0);
    expect(late, output).toBeDefined();
    expect(output).toMatch(/tool\.result +echo ok → "ship it"/);
  } finally {
    await (await late)?.stop();
  }
});

it("gives up when nothing listens within BRAIN_WAIT_SECONDS, and never waits on a refusal", async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const started = performance.now();
  const nothing = await runExample({ BRAIN_URL: url, BRAIN_WAIT_SECONDS: "1" });
  expect(nothing.code).toBe(1);
  expect(nothing.lines).toEqual([
    `waiting up to 1 s for Brain at ${url} to start…`,
    `cannot reach Brain at ${url}: nothing listens there (waited 1 s). Is it running? Is BRAIN_URL right?`,
  ]);
  expect(performance.now() - started).toBeLessThan(5000);

  const refused = await runExample({ BRAIN_URL: brain.ready, BRAIN_API_KEY: "not-the-key" });
  expect(refused.code).toBe(1);
  expect(refused.lines).toHaveLength(1);
  expect(refused.lines[0]).toMatch(`Brain at ${brain.ready} answered 401 unauthorized: `);
});

it("lets a real model decide for itself, with no script", async () => {
  const fake = await startFakeModelServer();
  fake.enqueue(openAIReply({ text: "the model decided" }));
  const real = await startBrainAt("127.0.0.1:0", "real", [
    {
      name: "real",
      provider: "openai",
      model: "test-model",
      base_url: `${fake.url}/v1`,
      context_window: 128_000,
    },
  ]);
  try {
    const { code, output } = await runExample({
      BRAIN_URL: real.ready,
      BRAIN_TOOLS: "echo",
      BRAIN_MODEL: "real",
    });
    expect(code, output).toBe(0);
    expect(output).toContain("the model decided");
    expect(fake.requests).toHaveLength(1);
  } finally {
    await real.stop();
    await fake.close();
  }
});
