/** Latency samples summarized the way the tables report them: nearest-rank percentiles, in ms. */
export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of sorted samples: a value that was really observed, never interpolated. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  const list = Array.from(sorted);
  return {
    count: sorted.length,
    p50: percentile(list, 50),
    p99: percentile(list, 99),
    mean: sorted.length > 0 ? total / sorted.length : Number.NaN,
    max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

/** Milliseconds since an arbitrary origin, with sub-microsecond resolution. */
export const nowMs = (): number => performance.now();

/** Run `call` `count` times in sequence; the latency of each, in ms. */
export async function timeEach(count: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = nowMs();
    await call(i);
    samples.push(nowMs() - start);
  }
  return samples;
}

/** The middle of `values`, the mean of the middle two for an even count; NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = Float64Array.from(values).sort();
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
