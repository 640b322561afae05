// A warning printed in a test run is one that nobody acts on: each fails the run instead, with the
// stack of where it was raised, so its cause gets fixed (or, a dependency's, silenced precisely
// with the reason beside it, as vitest.config.ts does for the AWS SDK's).
process.on("warning", (warning) => {
  // a plain error: some warnings hold whole objects (the emitter, its socket) that would be printed too
  const error = new Error(`${warning.name}: ${warning.message}`);
  error.stack = `${error.message}\n${warning.stack?.split("\n").slice(1).join("\n") ?? ""}`;
  throw error;
});
