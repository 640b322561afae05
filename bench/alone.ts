import { pathToFileURL } from "node:url";
import { describeMachine } from "./machine.js";
import { parseOptions } from "./options.js";
import { renderTable } from "./report.js";
import type { BenchContext, Benchmark } from "./section.js";

/**
 * `node dist/bench/NAME.js`: when the module at `moduleUrl` is the program, run its benchmark
 * alone with the default options and print its table on stdout; when run.ts imports it, nothing.
 */
export async function runWhenMain(moduleUrl: string, run: Benchmark): Promise<void> {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? "").href) return;
  const root = new URL("../..", import.meta.url).pathname;
  const parsed = parseOptions([], process.env);
  if (!parsed.ok) throw new Error("bench options");
  const context: BenchContext = {
    options: parsed.options,
    root,
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const section = await run(context);
  process.stdout.write(
    `${renderTable({ generated_at: new Date().toISOString(), machine: describeMachine(root), options: {}, sections: [section], failures: [] })}\n`,
  );
}
