import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/**/*.test.ts",
      "protocol/**/*.test.ts",
      "runtime/**/*.test.ts",
      "src/**/*.test.ts",
      "kit/**/*.test.ts",
      "services/**/*.test.ts",
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
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
  },
});
