import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { normalizeFlags } from "../../kit/index.js";
import { ROOT, runNode } from "../helpers/cli.js";
import { startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";
import { postCall } from "./kit-service.js";

const GREETER = join(ROOT, "test/kit/greeter-service.mjs");
const TOKEN = "greeter-token-5e4f3a";
const env = { GREETER_KEY: TOKEN };
const dir = mkdtempSync(join(tmpdir(), "service-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writeConfig = (name: string, config: Record<string, unknown>) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ token_env: "GREETER_KEY", ...config }));
  return path;
};

/** Run the greeter command to completion in `dir`. */
function greeter(args: string[], extraEnv: Record<string, string> = env) {
  return runNode(GREETER, args, extraEnv, { cwd: dir });
}

describe("normalizeFlags", () => {
  it("gives a one-dash word flag two dashes and leaves the rest as it is", () => {
    expect(
      normalizeFlags(["-config", "a.json", "-check", "--help", "-h", "-c", "-", "-config=b", "x"]),
    ).toEqual(["--config", "a.json", "--check", "--help", "-h", "-c", "-", "--config=b", "x"]);
  });
});

describe("a service's command line", () => {
  it("prints its help on --help and -h, exit 0", () => {
    for (const flag of ["--help", "-h", "-help"]) {
      expect(greeter([flag])).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^greeter — greets\n/),
      });
    }
  });

  it("checks a config with one dash or two, printing the check's summary", () => {
    const path = writeConfig("good.json", { greeting: "hi" });
    for (const args of [
      ["-config", path, "-check"],
      ["--config", path, "--check"],
      ["-c", path, "--check"],
    ]) {
      expect(greeter(args)).toEqual({ code: 0, stdout: `${path}: valid (greeting "hi")\n`, stderr: "" });
    }
  });

  it("reads the default config file when none is named", () => {
    writeConfig("greeter.json", { greeting: "hey" });
    expect(greeter(["-check"])).toMatchObject({ code: 0, stdout: 'greeter.json: valid (greeting "hey")\n' });
  });

  it("points at -config and --help when none is named and the default file is not there", () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    for (const args of [[], ["-check"]]) {
      expect(runNode(GREETER, args, env, { cwd: empty })).toEqual({
        code: 2,
        stdout: "",
        stderr: `greeter: no config file named, and there is no greeter.json in ${empty}: name one with -config FILE (greeter --help says more)\n`,
      });
    }
  });

  it("reports each problem on its own line after the file's path, exit 2; starting, says it did not start", () => {
    const path = writeConfig("bad.json", { token_env: "UNSET_NAME" });
    const problems = [
      `${path}: greeting: is required`,
      `${path}: token_env: set the environment variable UNSET_NAME to the token Brain sends`,
    ];
    expect(greeter(["-config", path, "-check"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `${problems.join("\n")}\n`,
    });
    expect(greeter(["-config", path])).toEqual({
      code: 2,
      stdout: "",
      stderr: `${[...problems, `${path}: 2 problems; greeter did not start`].join("\n")}\n`,
    });
    const empty = writeConfig("empty.json", { greeting: "" });
    expect(greeter(["-config", empty, "-check"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `${empty}: greeting: must not be empty\n${empty}: greeting: says nothing\n`,
    });
  });

  it("refuses unknown flags and commands with the help, exit 2", () => {
    const flag = greeter(["--colour", "red"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/^greeter: Unknown option '--colour'/);
    expect(flag.stderr).toContain("Usage:\n  greeter [-config FILE]");
    const command = greeter(["wave"]);
    expect(command).toMatchObject({ code: 2, stdout: "" });
    expect(command.stderr).toMatch(/^greeter: unknown command "wave"\n\ngreeter — greets\n/);
    // a name every object has is no command either
    for (const name of ["constructor", "toString"]) {
      const builtIn = greeter([name]);
      expect(builtIn).toMatchObject({ code: 2, stdout: "" });
      expect(builtIn.stderr).toMatch(new RegExp(`^greeter: unknown command "${name}"\n`));
    }
  });

  it("runs the service's own commands with their words, its flags and the config; their errors exit 1", () => {
    const path = writeConfig("hello.json", { greeting: "hello" });
    expect(greeter(["hello", "ada", "--config", path, "-mark", "!"])).toEqual({
      code: 0,
      stdout: "hello, ada!\n",
      stderr: "",
    });
    const usage = greeter(["hello", "--config", path]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^greeter: hello takes one name\n\ngreeter — greets/);
    expect(greeter(["hello", "crash", "--config", path])).toEqual({
      code: 1,
      stdout: "",
      stderr: "greeter: crashed on purpose\n",
    });
  });

  it("says why it did not start, exit 1: one line, or a list below the heading", () => {
    const one = writeConfig("taken.json", { greeting: "hi", fail_start: "the port is taken" });
    expect(greeter(["--config", one])).toMatchObject({
      code: 1,
      stderr: "greeter: not started: the port is taken\n",
    });
    const list = writeConfig("list.json", { greeting: "hi", fail_start: "no disk\nno network" });
    expect(greeter(["--config", list])).toMatchObject({
      code: 1,
      stderr: "greeter: not started:\nno disk\nno network\n",
    });
  });

  it.each(["SIGTERM", "SIGINT"] as const)("serves until %s, then closes and exits 0", async (signal) => {
    const path = writeConfig(`serve-${signal}.json`, { greeting: "good day" });
    const service = await startProcess([GREETER, "-config", path], env, toolServiceUrlFromLog);
    const answer = await postCall(
      `${service.ready}/tools/greet`,
      { tenant_id: "acme", session_id: "ses_1", call_id: "call_1", arguments: { name: "ada" } },
      { token: TOKEN },
    );
    expect(answer.json()).toEqual({ content: [{ type: "text", text: "good day, ada" }] });
    const stdout = service.child.stdout as NodeJS.ReadableStream & { readableEnded: boolean };
    const drained = stdout.readableEnded ? Promise.resolve() : once(stdout, "end");
    expect(await service.stop(signal)).toBe(0);
    await drained;
    expect(service.output.some((line) => line.includes('"msg":"stopping"'))).toBe(true);
    expect(service.output.join("\n")).not.toContain(TOKEN);
  });
});

describe("a service's config file", () => {
  it("is one problem when it cannot be read or is not JSON, in the words of Brain's own config", () => {
    const missing = join(dir, "none.json");
    expect(greeter(["-config", missing, "-check"])).toMatchObject({
      code: 2,
      stderr: `${missing}: cannot read ${missing}: ENOENT\n`,
    });
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{"greeting": ');
    const result = greeter(["-config", broken, "-check"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^${broken}: \\(root\\): not valid JSON: .+\\n$`));
  });

  it("names a secret's variable when it is unset or empty, and reads it when set", () => {
    const path = writeConfig("secret.json", { greeting: "hi", token_env: "GREETER_KEY" });
    for (const value of [undefined, ""]) {
      const result = greeter(["-config", path, "-check"], value === undefined ? {} : { GREETER_KEY: value });
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toBe(
        `${path}: token_env: set the environment variable GREETER_KEY to the token Brain sends\n`,
      );
    }
    const withToken = greeter(["-config", path, "-check"]);
    expect(withToken.code).toBe(0);
    expect(withToken.stdout + withToken.stderr).not.toContain(TOKEN);
  });

  it("refuses a secret no Authorization header could carry, in -check and at start, without showing it", () => {
    const path = writeConfig("stray.json", { greeting: "hi", token_env: "GREETER_KEY" });
    const expected = `${path}: token_env: environment variable GREETER_KEY holds a newline at its end; a key or token is visible ASCII characters only (no spaces, no line ends)`;
    const checked = greeter(["-config", path, "-check"], { GREETER_KEY: `${TOKEN}\n` });
    expect(checked).toEqual({ code: 2, stdout: "", stderr: `${expected}\n` });
    const started = greeter(["-config", path], { GREETER_KEY: `${TOKEN}\n` });
    expect(started.code).toBe(2);
    expect(started.stderr).toContain(expected);
    expect(started.stderr).not.toContain(TOKEN);
  });
});
