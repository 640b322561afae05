import { afterAll, beforeAll, expect, it } from "vitest";
import { expectConformance } from "../helpers/conformance.js";
import { type LocalTools, runLocalToolsCli, startLocalTools } from "./local-tools-process.js";

let tools: LocalTools;

beforeAll(async () => {
  tools = await startLocalTools();
});
afterAll(() => tools?.stop());

it.each([
  ["echo", { text: "conformance" }],
  ["wait", { seconds: 0.3 }],
  ["ask_approval", { question: "Is this conformant?", timeout_seconds: 0.3 }],
])("%s passes every rule of brain tools check, with its output schema", async (name, args) => {
  await expectConformance({ ...tools, logs: tools.output }, name, args);
});

it("validates its config with --check, naming every problem", () => {
  const ok = runLocalToolsCli(["--check", "--config", tools.configPath], tools.env);
  expect(ok).toMatchObject({ code: 0, stdout: `${tools.configPath}: valid\n` });
  const same = runLocalToolsCli(["--check", "--config", tools.configPath], {
    LOCAL_TOOLS_KEY: "same",
    LOCAL_TOOLS_OPERATOR_KEY: "same",
  });
  expect(same.code).toBe(2);
  expect(same.stderr).toContain("the operator token must differ");
  const none = runLocalToolsCli(["--check", "--config", tools.configPath], {});
  expect(none.stderr).toContain("token_env: set the environment variable LOCAL_TOOLS_KEY to");
  expect(none.stderr).toContain(
    "operator_token_env: set the environment variable LOCAL_TOOLS_OPERATOR_KEY to",
  );
  // a token with a stray line end passed -check once, then no request could ever present it
  const stray = runLocalToolsCli(["--check", "--config", tools.configPath], {
    LOCAL_TOOLS_KEY: "brain-token\r\n",
    LOCAL_TOOLS_OPERATOR_KEY: "operator token",
  });
  expect(stray.code).toBe(2);
  expect(stray.stderr).toContain(
    "token_env: environment variable LOCAL_TOOLS_KEY holds a carriage return at its end;",
  );
  expect(stray.stderr).toContain(
    "operator_token_env: environment variable LOCAL_TOOLS_OPERATOR_KEY holds a space inside;",
  );
  expect(stray.stderr).not.toMatch(/brain-token|operator token/);
});

it("refuses unknown fields and a second process on the same approvals file", async () => {
  const { writeFileSync, readFileSync } = await import("node:fs");
  const original = readFileSync(tools.configPath, "utf8");
  const config = JSON.parse(original);
  writeFileSync(
    tools.configPath,
    JSON.stringify({ ...config, approvals: { ...config.approvals, timeout: 3 }, extra: 1 }),
  );
  const unknown = runLocalToolsCli(["--check", "--config", tools.configPath], tools.env);
  writeFileSync(tools.configPath, JSON.stringify({ ...config, listen: "127.0.0.1:0" }));
  const second = runLocalToolsCli(["--config", tools.configPath], tools.env);
  writeFileSync(tools.configPath, original);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("approvals.timeout: unknown field");
  expect(unknown.stderr).toContain("extra: unknown field");
  expect(second.code).toBe(1);
  expect(second.stderr).toContain("is in use by another local-tools process");
});
