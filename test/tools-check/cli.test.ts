import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_SERVICE_RULES } from "../../src/tools-check/rules.js";
import { BRAIN_BIN, ROOT, runBrain } from "../helpers/cli.js";
import { closedPort } from "../helpers/ports.js";
import {
  pythonAvailable,
  type StartedProcess,
  startEchoService,
  startProcess,
  startPythonService,
} from "../helpers/processes.js";
import { type LocalTools, startLocalTools } from "../local-tools/local-tools-process.js";

const TOKEN = "cli-check-token-9d8e7f";
const RULES = TOOL_SERVICE_RULES.length;
const python = pythonAvailable("brain tools config and check against examples/tools/server.py");
let echo: StartedProcess & { ready: string };
let pythonService: StartedProcess & { ready: string };
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tools-cli-"));
  echo = await startEchoService(TOKEN);
  if (python) pythonService = await startPythonService(TOKEN);
});
afterAll(async () => {
  await echo?.stop();
  await pythonService?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Arguments each example tool is checked with. */
const SAMPLE_ARGUMENTS: Record<string, string> = { echo: '{"text":"hi"}', countdown: '{"from":2}' };

interface Binding {
  name: string;
  url: string;
  input_schema: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

describe.each([
  { service: "examples/tools/server.mjs", url: () => echo.ready, tools: ["echo"], available: true },
  {
    service: "examples/tools/server.py",
    url: () => pythonService.ready,
    tools: ["echo", "countdown"],
    available: python,
  },
])("brain tools config and check on $service", ({ url, tools, available }) => {
  it.skipIf(!available)("writes a config Brain accepts, whose every tool passes every rule", () => {
    const written = runBrain(["tools", "config", url(), "--token-env", "ECHO_KEY"], { ECHO_KEY: TOKEN });
    expect(written.stderr).toContain(`${tools.length} tools from ${url()}/tools`);
    expect(written.code).toBe(0);
    const config = JSON.parse(written.stdout) as { tools: Binding[] };
    expect(config.tools.map((tool) => tool.name)).toEqual(tools);
    // the same echo as the hand-written binding of examples/brain.json
    const example = JSON.parse(readFileSync(join(ROOT, "examples/brain.json"), "utf8")).tools[0];
    expect(config.tools[0]).toMatchObject({
      name: example.name,
      description: example.description,
      input_schema: example.input_schema,
      url: `${url()}/tools/echo`,
      token_env: "ECHO_KEY",
    });
    const path = join(dir, `${tools.length}-tools.json`);
    writeFileSync(path, written.stdout);
    expect(runBrain(["-config", path, "-check"], { BRAIN_API_KEY: "k", ECHO_KEY: "t" }).code).toBe(0);

    for (const tool of config.tools) {
      const schema = tool.output_schema ? ["--output-schema", JSON.stringify(tool.output_schema)] : [];
      const args = ["--arguments", SAMPLE_ARGUMENTS[tool.name] ?? "{}", ...schema];
      const run = runBrain(["tools", "check", tool.url, "--token-env", "ECHO_KEY", ...args], {
        ECHO_KEY: TOKEN,
      });
      expect(run.stderr).toBe("");
      expect(run.code, run.stdout).toBe(0);
      const lines = run.stdout.trim().split("\n");
      expect(lines[0]).toBe(tool.url);
      expect(lines.slice(1, -1)).toHaveLength(RULES);
      for (const line of lines.slice(1, -1)) expect(line).toMatch(/^PASS {2}\S+ +\S/);
      expect(lines.at(-1)).toBe(`all ${RULES} rules pass`);
      expect(run.stdout).not.toContain(TOKEN);
    }
  });
});

describe("brain tools check", () => {
  it("--wait keeps trying while the service is still starting", async () => {
    const port = await closedPort();
    const command = spawn(
      process.execPath,
      [BRAIN_BIN, "tools", "check", `http://127.0.0.1:${port}/tools/echo`, "--wait", "10"],
      { env: { PATH: process.env.PATH ?? "", BRAIN_TOOLS_KEY: TOKEN }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    command.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => command.once("exit", resolve));
    // the command is waiting before the service starts
    while (!stderr.includes("waiting for")) await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await startProcess(
      ["examples/tools/server.mjs"],
      { BRAIN_TOOLS_KEY: TOKEN, PORT: String(port) },
      (line) => line.match(/listening on (\S+)/)?.[1],
    );
    try {
      expect(await exited, stderr).toBe(0);
    } finally {
      await late.stop();
    }
    const down = runBrain(["tools", "check", "http://127.0.0.1:1/tools/echo", "--wait", "0.5"], {
      BRAIN_TOOLS_KEY: "t",
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach .*ECONNREFUSED\) after 0.5 s; is the service running\?/);
  });

  it("fails with a wrong token, says why, exits 1, and never prints the token", () => {
    const run = runBrain(["tools", "check", `${echo.ready}/tools/echo`], {
      BRAIN_TOOLS_KEY: "not-the-token",
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL {2}status +answered 401 to the call with the token: is it the right one\?$/m,
    );
    expect(run.stdout).toMatch(/^PASS {2}auth-missing/m);
    expect(run.stdout).not.toContain("not-the-token");
  });

  it("judges a tool URL whose percent-escape is broken by what the service answers", () => {
    const run = runBrain(["tools", "check", `${echo.ready}/tools/ech%E0%A4%A`], { BRAIN_TOOLS_KEY: TOKEN });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL {2}status +/m);
  });

  it.each([
    [[], {}, /give exactly one URL/],
    [["http://127.0.0.1:1/tools/echo"], {}, /BRAIN_TOOLS_KEY is not set/],
    [
      ["http://127.0.0.1:1/tools/echo", "--arguments", "[1]"],
      { BRAIN_TOOLS_KEY: "t" },
      /must be a JSON object/,
    ],
    [
      ["http://127.0.0.1:1/tools/echo", "--output-schema", '{"type":"string"}'],
      { BRAIN_TOOLS_KEY: "t" },
      /--output-schema must be an object schema/,
    ],
    [
      ["http://127.0.0.1:1/tools/echo", "--output-schema", '{"type":"object","required":"x"}'],
      { BRAIN_TOOLS_KEY: "t" },
      /--output-schema does not compile/,
    ],
    [
      ["http://127.0.0.1:1/tools/echo", "--timeout", "0"],
      { BRAIN_TOOLS_KEY: "t" },
      /--timeout must be a positive number/,
    ],
  ])("refuses bad usage %j with exit 2 and a clear message", (args, env, message) => {
    const run = runBrain(["tools", "check", ...args], env as Record<string, string>);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it("prints help", () => {
    const run = runBrain(["tools", "check", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--token-env NAME");
  });
});

describe("brain tools config", () => {
  let tools: LocalTools;
  beforeAll(async () => {
    tools = await startLocalTools();
  });
  afterAll(async () => {
    await tools?.stop();
  });

  it("writes a host config Brain accepts, with the service's schemas and only variable names", () => {
    const run = runBrain(["tools", "config", tools.url, "--token-env", "LOCAL_TOOLS_KEY"], tools.env);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("3 tools from");
    const config = JSON.parse(run.stdout);
    expect(config.tenants).toEqual([{ id: "local", api_key_env: "BRAIN_API_KEY" }]);
    expect(config.tools.map((tool: { name: string }) => tool.name)).toEqual(["echo", "wait", "ask_approval"]);
    expect(config.tools[2]).toMatchObject({
      url: `${tools.url}/tools/ask_approval`,
      token_env: "LOCAL_TOOLS_KEY",
      tenants: ["local"],
      timeout_seconds: 90,
      input_schema: { type: "object", required: ["question"] },
    });
    expect(run.stdout).not.toContain(tools.token);
    const path = join(dir, "brain.json");
    writeFileSync(path, run.stdout);
    const checked = runBrain(["-config", path, "-check"], { BRAIN_API_KEY: "k", LOCAL_TOOLS_KEY: "t" });
    expect(checked.stdout).toContain("valid (1 tenants, 1 models, 3 tools)");
    expect(checked.code).toBe(0);
  });

  it("says what is wrong when the token is refused or nothing answers", () => {
    const refused = runBrain(["tools", "config", tools.url], { BRAIN_TOOLS_KEY: "wrong" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the token \(401\)/);
    const down = runBrain(["tools", "config", "http://127.0.0.1:1"], { BRAIN_TOOLS_KEY: "t" });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127.0.0.1:1\/tools .*is the service running\?/);
  });

  it("--wait keeps trying while the service is still starting", async () => {
    const port = await closedPort();
    const command = spawn(
      process.execPath,
      [BRAIN_BIN, "tools", "config", `http://127.0.0.1:${port}`, "--wait", "10"],
      {
        env: { PATH: process.env.PATH ?? "", BRAIN_TOOLS_KEY: "late-service-token" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    command.stdout.on("data", (chunk) => (stdout += chunk));
    command.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => command.once("exit", resolve));
    // the command is waiting before the service starts
    while (!stderr.includes("waiting for")) await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await startLocalTools(
      { listen: `127.0.0.1:${port}` },
      { LOCAL_TOOLS_KEY: "late-service-token" },
    );
    try {
      expect(await exited, stderr).toBe(0);
      expect(JSON.parse(stdout).tools).toHaveLength(3);
    } finally {
      await late.stop();
    }
  });

  it("--wait gives up when the time is over, and refuses a time that is not one", () => {
    const down = runBrain(["tools", "config", "http://127.0.0.1:1", "--wait", "0.5"], {
      BRAIN_TOOLS_KEY: "t",
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach .*ECONNREFUSED\) after 0.5 s; is the service running\?/);
    const bad = runBrain(["tools", "config", "http://127.0.0.1:1", "--wait", "soon"], {
      BRAIN_TOOLS_KEY: "t",
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--wait takes seconds");
  });
});
