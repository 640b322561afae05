import { afterAll, beforeAll, it } from "vitest";
import { expectConformance } from "../helpers/conformance.js";
import { needs } from "../helpers/host-needs.js";
import { startTestSandbox, type TestSandbox } from "./sandbox-service.js";

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(180_000);
});

afterAll(async () => {
  await sandbox?.close();
});

// each check is a session of its own, so sandbox_read_file finds nothing and no job is the
// checker's: a refusal must conform too
it.each([
  ["sandbox_exec", { language: "bash", code: "echo conformance; echo on stderr >&2" }, "ok"],
  ["sandbox_exec", { language: "python", code: "import sys; sys.exit(3)" }, "ok"],
  ["sandbox_start", { language: "bash", code: "true" }, "ok"],
  ["sandbox_write_file", { path: "check.txt", content: "conformance" }, "ok"],
  ["sandbox_read_file", { path: "missing.txt" }, "threw"],
  ["sandbox_list", { path: "." }, "ok"],
  ["sandbox_status", { job_id: "job_not_the_checkers" }, "threw"],
  ["sandbox_cancel", { job_id: "job_not_the_checkers" }, "threw"],
] as const)(
  "%s passes every rule of brain tools check (%j), with its output schema",
  needs("sandbox"),
  async (name, args, outcome) => {
    await expectConformance(sandbox, name, args, outcome);
  },
);
