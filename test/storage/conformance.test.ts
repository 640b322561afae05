import { afterAll, beforeAll, expect, it } from "vitest";
import { checkToolService } from "../../src/tools-check/check.js";
import { startStorage, type TestStorage } from "./storage-service.js";

let service: TestStorage;

beforeAll(async () => {
  service = await startStorage();
  // the checker calls as this tenant, and storage is per tenant: these are the files it finds
  for (const path of ["checked/read.md", "checked/deleted.md"]) {
    const written = await service.call(
      "storage_write",
      { path, content: "checked" },
      {
        tenant_id: "brain-tools-check",
      },
    );
    expect(written.is_error).toBe(false);
  }
});
afterAll(() => service?.close());

/** `{tool, outcome}` of each call the service answered in the log since `from`. */
function answeredSince(from: number) {
  return service
    .logs()
    .slice(from)
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { msg: string; tool?: string; outcome?: string })
    .filter((entry) => entry.msg === "tool call answered")
    .map(({ tool, outcome }) => ({ tool, outcome }));
}

it.each([
  ["storage_write", { path: "checked/written.md", content: "conformance" }],
  ["storage_read", { path: "checked/read.md" }],
  ["storage_stat", { path: "checked/read.md" }],
  ["storage_list", { prefix: "checked/" }],
  ["storage_delete", { path: "checked/deleted.md" }],
])("%s passes every rule of brain tools check", async (name, args) => {
  const from = service.logs().length;
  const outcomes = await checkToolService(`${service.url}/tools/${name}`, {
    token: service.token,
    arguments: args,
    afterResultMs: 300,
  });
  expect(outcomes.filter((outcome) => !outcome.pass)).toEqual([]);
  // an error result passes the rules too: the rules must have judged the tool doing its work
  expect(answeredSince(from)).toEqual([{ tool: name, outcome: "ok" }]);
});
