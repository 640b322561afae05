import { afterAll, beforeAll, expect, it } from "vitest";
import { expectConformance } from "../helpers/conformance.js";
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

it.each([
  ["storage_write", { path: "checked/written.md", content: "conformance" }],
  ["storage_read", { path: "checked/read.md" }],
  ["storage_stat", { path: "checked/read.md" }],
  ["storage_list", { prefix: "checked/" }],
  ["storage_delete", { path: "checked/deleted.md" }],
])("%s passes every rule of brain tools check, with its output schema", async (name, args) => {
  await expectConformance(service, name, args);
});
