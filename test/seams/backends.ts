import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret } from "../../runtime/secret.js";
import { type Backend, openBackend } from "../../src/store/backend.js";
import { createLogger } from "../../src/telemetry/logger.js";
import type { TestDatabase } from "../helpers/postgres.js";

/** A backend a conformance case opened, closed by the case; its files or database go with it. */
export type OpenedBackend = Backend;

const quiet = createLogger("silent");

/** One process's parts, on a SQLite file of their own. */
export async function openEmbedded(): Promise<OpenedBackend> {
  const dir = mkdtempSync(join(tmpdir(), "brain-seams-"));
  const backend = await openBackend({ kind: "sqlite", path: join(dir, "brain.db") }, { logger: quiet });
  return {
    ...backend,
    close: async () => {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One instance's parts on `database`: open several for several instances of one cluster. */
export async function openOnPostgres(database: TestDatabase, leaseSeconds = 2): Promise<OpenedBackend> {
  return openBackend(
    { kind: "postgres", url: new Secret(database.url), urlEnv: "DATABASE_URL", leaseSeconds, poolSize: 4 },
    { logger: quiet },
  );
}
