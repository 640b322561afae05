import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FilesystemBackend } from "../../services/storage/fs-backend.js";
import { backendConformance } from "./backend-conformance.js";

backendConformance("filesystem", async () => {
  const root = mkdtempSync(join(tmpdir(), "storage-fs-"));
  let backend = await FilesystemBackend.open(root);
  return {
    backend,
    reopen: async () => {
      await backend.close();
      backend = await FilesystemBackend.open(root);
      return backend;
    },
    cleanup: async () => {
      await backend.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
});
