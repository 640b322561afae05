import { afterAll, beforeAll, describe } from "vitest";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { openEmbedded, openOnPostgres } from "./backends.js";
import { describeEventBusConformance } from "./event-bus-conformance.js";
import { describeInspectionGrantsConformance } from "./inspection-grants-conformance.js";
import { describeTurnLeasesConformance } from "./turn-leases-conformance.js";

// every seam's suite, against one process's implementations and against PostgreSQL's

describe("one process (SQLite)", () => {
  describeEventBusConformance("in-process", openEmbedded);
  describeTurnLeasesConformance("in-process", openEmbedded);
  describeInspectionGrantsConformance("in-process", openEmbedded);
});

describe("PostgreSQL", needs("postgres"), () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  const open = () => openOnPostgres(database);
  describeEventBusConformance("postgres", open);
  describeTurnLeasesConformance("postgres", open);
  describeInspectionGrantsConformance("postgres", open);
});
