import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { lacks, REQUIRE_ALL } from "./test/helpers/host-needs.js";

/** The suites that run twice: on SQLite, and again on PostgreSQL (test/helpers/test-store.ts). */
const ON_BOTH_STORES = [
  "test/protocol/outcomes.test.ts",
  "test/protocol/request.test.ts",
  "test/reliability/*.test.ts",
  "test/api.test.ts",
  "test/turns.test.ts",
  "test/live-order.test.ts",
  "test/controls/*.test.ts",
];

const postgresLacks = process.env[REQUIRE_ALL] === "1" ? [] : lacks("postgres");
if (postgresLacks.length > 0) {
  process.stderr.write(
    `The protocol and reliability suites run on SQLite only: this host lacks ${postgresLacks.join("; ")}.\n`,
  );
}

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // The test files spend most of their time waiting on the processes and sockets they start, so
    // Vitest's default of one worker fewer than the cores left a 2-core machine half idle: the whole
    // run took 822 s with one worker, 484 s and 568 s in two runs with two, every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    env: {
      // the AWS SDK (the S3 tests) warns at its first client that its releases from 2027 on need
      // Node 22: a notice for whoever upgrades the dependency, not for each test run (Node 20 is
      // what package.json's engines promise)
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    },
    globalSetup: ["./test/helpers/temp-dir-setup.ts"],
    setupFiles: ["./test/helpers/warnings-setup.ts"],
    // the second ends a run that skipped tests for what the host lacks with one line saying what
    reporters: ["default", "./test/helpers/host-needs-reporter.ts"],
    projects: [
      {
        extends: true as const,
        test: {
          name: "brain",
          include: [
            "test/**/*.test.ts",
            "protocol/**/*.test.ts",
            "runtime/**/*.test.ts",
            "src/**/*.test.ts",
            "kit/**/*.test.ts",
            "services/**/*.test.ts",
          ],
        },
      },
      ...(postgresLacks.length > 0
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: "postgres",
                include: ON_BOTH_STORES,
                env: {
                  BRAIN_TEST_STORE: "postgres",
                  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
                },
              },
            },
          ]),
    ],
  },
});
