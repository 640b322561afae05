import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite.js";
import { describeStoreConformance } from "./store-conformance.js";

describeStoreConformance("sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-store-"));
  const path = join(dir, "brain.db");
  return {
    open: async () => new SqliteStore(path),
    reopen: async (store) => {
      await store.close();
      return new SqliteStore(path);
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
