import type { Registry } from "prom-client";

/*
 * Counters and histograms for what every request and tool call counts, which prom-client's
 * registry reads when scraped. Counting adds to plain numbers: prom-client's own metrics check and
 * hash the labels at every call (6–8 µs for the four counts of a model call), and a tool call
 * counts about ten times. A scrape prints them as prom-client prints its own (tallies.test.ts).
 */

type Labels<L extends string> = Record<L, string | number>;

/** What prom-client's registry reads of a metric: the shape of its own metrics' `get()`. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** The count of one set of label values. */
export class CounterCell {
  value = 0;

  inc(value = 1): void {
    this.value += value;
  }
}

/** The observations of one set of label values. */
export class HistogramCell {
  /** Observations per bucket, not cumulative; the last is above every bound (+Inf). */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++;
    (this.counts[bucket] as number)++;
    this.sum += value;
    this.count++;
  }
}

/** Cells by one label's value, or the next label's tree. */
type LabelTree<Cell> = Map<string, Cell | LabelTree<Cell>>;

abstract class Tally<L extends string, Cell> {
  /** Every cell with its label values, in the order they were made: what a scrape prints. */
  readonly #cells: { labels: Labels<L>; cell: Cell }[] = [];
  /**
   * The cells by the first label's value, then the next's: found without a key string built and
   * hashed at every count (a label's value is most often a string whose hash V8 already keeps).
   */
  readonly #byValue: LabelTree<Cell> = new Map();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    // prom-client's registry takes any metric with a name and a get(); its types want its own classes
    registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  protected abstract readonly type: "counter" | "histogram";
  protected abstract newCell(): Cell;
  protected abstract valuesOf(labels: Labels<L>, cell: Cell): MetricValue[];

  /** The cell of these label values, made the first time: a caller counting often keeps it. */
  labels(labels: Labels<L>): Cell {
    const names = this.labelNames;
    let level = this.#byValue;
    // a metric without labels has one cell, under the empty value
    const last = names.length - 1;
    for (let index = 0; index < last; index++) {
      const value = String(labels[names[index] as L]);
      let next = level.get(value) as LabelTree<Cell> | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = last < 0 ? "" : String(labels[names[last] as L]);
    let cell = level.get(value) as Cell | undefined;
    if (!cell) {
      const copied = {} as Labels<L>;
      for (const name of names) copied[name] = String(labels[name]);
      cell = this.newCell();
      this.#cells.push({ labels: copied, cell });
      level.set(value, cell);
    }
    return cell;
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.#cells.flatMap(({ labels, cell }) => this.valuesOf(labels, cell)),
      aggregator: "sum" as const,
    };
  }
}

export class TallyCounter<L extends string = never> extends Tally<L, CounterCell> {
  protected readonly type = "counter";

  /** With labels, or without when the counter has none. */
  inc(...args: [L] extends [never] ? [value?: number] : [labels: Labels<L>, value?: number]): void {
    if (typeof args[0] === "object") this.labels(args[0]).inc(args[1]);
    else this.labels({} as Labels<L>).inc(args[0]);
  }

  protected newCell() {
    return new CounterCell();
  }

  protected valuesOf(labels: Labels<L>, cell: CounterCell): MetricValue[] {
    return [{ labels, value: cell.value }];
  }
}

export class TallyHistogram<L extends string = never> extends Tally<L, HistogramCell> {
  protected readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  /** With labels, or without when the histogram has none. */
  observe(...args: [L] extends [never] ? [value: number] : [labels: Labels<L>, value: number]): void {
    if (typeof args[0] === "object") this.labels(args[0]).observe(args[1] as number);
    else this.labels({} as Labels<L>).observe(args[0]);
  }

  protected newCell() {
    return new HistogramCell(this.bounds);
  }

  protected valuesOf(labels: Labels<L>, cell: HistogramCell): MetricValue[] {
    const values: MetricValue[] = [];
    let below = 0;
    for (const [index, bound] of [...this.bounds, "+Inf" as const].entries()) {
      below += cell.counts[index] as number;
      values.push({ labels: { le: bound, ...labels }, value: below, metricName: `${this.name}_bucket` });
    }
    values.push(
      { labels, value: cell.sum, metricName: `${this.name}_sum` },
      { labels, value: cell.count, metricName: `${this.name}_count` },
    );
    return values;
  }
}
