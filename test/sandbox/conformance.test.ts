import { afterAll, beforeAll, expect, it } from "vitest";
import { checkToolService } from "../../src/tools-check/check.js";
import { startTestSandbox, type TestSandbox } from "./sandbox-service.js";

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(180_000);
});

afterAll(async () => {
  await sandbox?.close();
});

// each check is a session of its own, so sandbox_read_file finds nothing: a refusal must conform too
it.each([
  ["sandbox_exec", { language: "bash", code: "echo conformance; echo on stderr >&2" }],
  ["sandbox_exec", { language: "python", code: "import sys; sys.exit(3)" }],
  ["sandbox_start", { language: "bash", code: "true" }],
  ["sandbox_write_file", { path: "check.txt", content: "conformance" }],
  ["sandbox_read_file", { path: "missing.txt" }],
  ["sandbox_list", { path: "." }],
])("%s passes every rule of brain tools check (%j)", async (name, args) => {
  const outcomes = await checkToolService(`${sandbox.url}/tools/${name}`, {
    token: sandbox.token,
    arguments: args,
    afterResultMs: 300,
  });
  expect(outcomes.filter((outcome) => !outcome.pass)).toEqual([]);
});
