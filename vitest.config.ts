import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "kit/**/*.test.ts", "services/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // the second ends a run that skipped tests for what the host lacks with one line saying what
    reporters: ["default", "./test/helpers/host-needs-reporter.ts"],
  },
});
