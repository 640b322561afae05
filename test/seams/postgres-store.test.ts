import { describe, it } from "vitest";
import { openPostgresPool } from "../../src/store/postgres/open.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { createTestDatabase, postgresAnswers, type TestDatabase } from "../helpers/postgres.js";
import { describeStoreConformance } from "./store-conformance.js";

const available = await postgresAnswers();

if (available) {
  let database: TestDatabase | undefined;
  const open = async () => {
    database ??= await createTestDatabase();
    return new PostgresStore(
      await openPostgresPool({ url: database.url, poolSize: 10, urlEnv: "DATABASE_URL" }),
    );
  };
  describeStoreConformance("postgres", () => ({
    open,
    reopen: async (store) => {
      await store.close();
      return open();
    },
    cleanup: async () => database?.drop(),
  }));
} else {
  describe("store conformance: postgres", () => {
    it.skip("needs PostgreSQL at 127.0.0.1:5432 (Debian: apt-get install postgresql)", () => {});
  });
}
