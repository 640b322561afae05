import { describe } from "vitest";
import { openPostgresPool } from "../../src/store/postgres/open.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { describeStoreConformance } from "./store-conformance.js";

describe("PostgreSQL", needs("postgres"), () => {
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
});
