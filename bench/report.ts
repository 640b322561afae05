import type { Machine } from "./machine.js";
import { type Figure, ratio, type Section } from "./section.js";

export interface BenchResults {
  generated_at: string;
  /** With --compare, the reference revision measured beside this tree. */
  machine: Machine & { compared_with?: string };
  options: Record<string, unknown>;
  sections: Section[];
  /** Benchmarks that failed to run, with why: a partial run says so instead of hiding it. */
  failures: { id: string; error: string }[];
}

function format(value: number, unit: string): string {
  if (!Number.isFinite(value)) return "n/a";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
  return `${value.toFixed(digits)} ${unit}`;
}

function row(figure: Figure): string[] {
  const r = ratio(figure);
  return [
    figure.name,
    format(figure.value, figure.unit),
    figure.reference ? `${figure.reference.name} ${format(figure.reference.value, figure.unit)}` : "",
    r === undefined ? "" : `${r.toFixed(2)}×`,
    figure.target ? `${figure.target.text} ${figure.target.met ? "✓" : "✗ missed"}` : "",
  ];
}

/** The results as a plain-text table, one block per benchmark, the machine first. */
export function renderTable(results: BenchResults): string {
  const m = results.machine;
  const lines = [
    `Brain benchmarks — ${results.generated_at}`,
    `machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.os}, Node ${m.node}, commit ${m.commit}${m.compared_with ? ` against ${m.compared_with}` : ""}, load ${m.load_average_1m}`,
    ...(typeof results.options.brainNodeOptions === "string"
      ? [`Brain processes started with NODE_OPTIONS=${results.options.brainNodeOptions}`]
      : []),
    "",
  ];
  const header = ["figure", "value", "reference", "ratio", "target"];
  for (const section of results.sections) {
    const rows = [header, ...section.figures.map(row)];
    const widths = header.map((_, i) => Math.max(...rows.map((cells) => (cells[i] ?? "").length)));
    const params = Object.entries(section.params)
      .map(([key, value]) => `${key}=${value}`)
      .join(", ");
    lines.push(`${section.title}${params ? `  (${params})` : ""}`);
    for (const [i, cells] of rows.entries()) {
      lines.push(
        `  ${cells
          .map((cell, j) => cell.padEnd(widths[j] ?? 0))
          .join("  ")
          .trimEnd()}`,
      );
      if (i === 0) lines.push(`  ${widths.map((width) => "-".repeat(width)).join("  ")}`);
    }
    lines.push("");
  }
  for (const failure of results.failures) lines.push(`${failure.id}: FAILED — ${failure.error}`);
  return lines.join("\n");
}
