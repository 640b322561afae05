import type { BenchOptions } from "./options.js";
import type { ReferenceBuild } from "./reference-build.js";

/** One measured figure, next to the same quantity for its reference, measured in the same run. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** The raw limit or the peer; the table prints value ÷ reference as the ratio. */
  reference?: { name: string; value: number };
  /** A goal from issue 11 and whether this run met it: reported, never asserted. */
  target?: { text: string; met: boolean };
}

/** A benchmark's results: what it ran (params) and what it measured. */
export interface Section {
  id: string;
  title: string;
  params: Record<string, unknown>;
  figures: Figure[];
  notes: string[];
}

export interface BenchContext {
  options: BenchOptions;
  /** The repository root: examples/ and dist/ are found from here. */
  root: string;
  /** With --compare: the reference revision's Brain, built. */
  reference?: ReferenceBuild;
  /** Log a progress line to stderr, so stdout holds only the table. */
  log: (line: string) => void;
}

/**
 * A benchmark module: bench/<name>.ts exporting `run`. The sandbox and storage benchmarks plug in
 * this way; run.ts loads each module in BENCHMARKS that is built.
 */
export type Benchmark = (context: BenchContext) => Promise<Section>;

export const ratio = (figure: Figure): number | undefined =>
  figure.reference && figure.reference.value !== 0 ? figure.value / figure.reference.value : undefined;

/** A figure in milliseconds against its reference's. */
export const versus = (name: string, value: number, referenceName: string, reference: number): Figure => ({
  name,
  value,
  unit: "ms",
  reference: { name: referenceName, value: reference },
});
