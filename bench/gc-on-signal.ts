// Preloaded into a process the memory benchmark measures (node --expose-gc --import this): SIGUSR2
// runs a full garbage collection, so memory can be read without the garbage of the work before it,
// and reports the heap on stderr as "gc-probe {memoryUsage}". It changes nothing else in the process.
process.on("SIGUSR2", () => {
  (globalThis as { gc?: () => void }).gc?.();
  process.stderr.write(`gc-probe ${JSON.stringify(process.memoryUsage())}\n`);
});
