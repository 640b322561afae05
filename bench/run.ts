// `npm run bench`: every benchmark against its raw limit and its peer, in one run, on this machine.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describeMachine } from "./machine.js";
import { HELP, parseOptions } from "./options.js";
import { stopEverythingStarted } from "./processes.js";
import { buildReference } from "./reference-build.js";
import { type BenchResults, renderTable } from "./report.js";
import type { BenchContext, Benchmark } from "./section.js";

/** In the order they run. sandbox, storage and mcp-bridge belong to their services and run when built. */
const BENCHMARKS = [
  "overhead",
  "throughput",
  "fanout",
  "memory",
  "turn-start",
  "postgres",
  "sandbox",
  "storage",
  "mcp-bridge",
  "instructions",
];
const OPTIONAL = new Set(["sandbox", "storage", "mcp-bridge"]);
/** Run only when --only names them: instructions needs valgrind and takes minutes. */
const ON_REQUEST = new Set(["instructions"]);
const DEFAULT_RUN = BENCHMARKS.filter((id) => !ON_REQUEST.has(id));
/** The benchmarks --compare runs a reference build in. */
const COMPARED = new Set(["overhead", "instructions"]);

async function main(): Promise<number> {
  const parsed = parseOptions(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    if (parsed.help) {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    process.stderr.write(`bench: ${parsed.problem}\n\n${HELP}\n`);
    return 2;
  }
  const { options } = parsed;
  const unknown = (options.only ?? []).filter((id) => !BENCHMARKS.includes(id));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown benchmark ${unknown.join(", ")}; known: ${BENCHMARKS.join(", ")}\n`);
    return 2;
  }
  const root = fileURLToPath(new URL("../..", import.meta.url));
  if (options.cpuProfDir) mkdirSync(resolve(options.cpuProfDir), { recursive: true });
  if (options.brainRoot && !existsSync(resolve(options.brainRoot, "dist/src/cli/main.js"))) {
    process.stderr.write(`bench: ${options.brainRoot} holds no built Brain: run npm run build there\n`);
    return 2;
  }
  if (options.compare && !(options.only ?? DEFAULT_RUN).some((id) => COMPARED.has(id))) {
    process.stderr.write(
      "bench: --compare measures the overhead and instructions benchmarks: add one to --only\n",
    );
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const context: BenchContext = {
    options: {
      ...options,
      ...(options.cpuProfDir && { cpuProfDir: resolve(options.cpuProfDir) }),
      ...(options.brainRoot && { brainRoot: resolve(options.brainRoot) }),
    },
    root,
    ...(options.compare && { reference: buildReference(root, options.compare, log) }),
    log,
  };
  const results: BenchResults = {
    generated_at: new Date().toISOString(),
    machine: {
      ...describeMachine(root, context.options.brainRoot),
      ...(context.reference && { compared_with: context.reference.commit }),
    },
    options: { ...options },
    sections: [],
    failures: [],
  };
  const out = resolve(options.out);
  mkdirSync(dirname(out), { recursive: true });
  // written after every benchmark, so a run that dies part way keeps what it measured
  const save = () => writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  let running = "";
  // an error nothing caught, in a benchmark's own children or sockets: that benchmark failed, the
  // results so far stand, and the run ends here since the process may be in any state
  process.once("uncaughtException", (error) => {
    results.failures.push({ id: running, error: `uncaught: ${error.stack ?? error.message}` });
    save();
    process.stdout.write(`${renderTable(results)}\nresults: ${out}\n`);
    void stopEverythingStarted().finally(() => process.exit(1));
  });
  // stopped from outside: a terminal's Ctrl-C reaches the whole process group, a kill only this one
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      void stopEverythingStarted().finally(() => process.exit(code));
    });
  }
  for (const id of options.only ?? DEFAULT_RUN) {
    const file = new URL(`./${id}.js`, import.meta.url);
    if (!existsSync(file)) {
      if (OPTIONAL.has(id)) continue;
      results.failures.push({ id, error: `${fileURLToPath(file)} is missing: run npm run build` });
      continue;
    }
    running = id;
    context.log(`${id}: starting`);
    try {
      const { run } = (await import(file.href)) as { run: Benchmark };
      results.sections.push(await run(context));
    } catch (error) {
      results.failures.push({ id, error: error instanceof Error ? error.message : String(error) });
    }
    save();
  }
  save();
  process.stdout.write(`${renderTable(results)}\nresults: ${out}\n`);
  return results.failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(
      `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
