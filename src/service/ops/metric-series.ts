/**
 * Counters and histograms for the hot paths (every request, every upstream call). prom-client's
 * own hash their label set on every inc/observe, bound children included: several microseconds
 * per call, measured on the service-throughput benchmark as tens of microseconds of CPU per
 * request. Here a label set is bound once to a series object (kept for the life of the process:
 * label values come from closed sets, see metrics.ts), and an observation is a few number
 * writes on it.
 *
 * They register in a prom-client Registry beside its own metrics (the Registry asks each for
 * `get()` when scraped), so the exposition text is prom-client's, series for series what its
 * Counter and Histogram would print.
 */
import type { Registry } from 'prom-client';

type LabelValues<L extends string> = Record<L, string | number>;

interface Options<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  registers: Registry[];
}

/** One sample as prom-client's Registry prints it (`sharedLabels` follow the sample's own). */
interface Sample {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string | number>;
  metricName?: string;
}

interface Exported {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

abstract class SeriesMetric<L extends string, S extends { labels: LabelValues<L> }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  private readonly labelNames: readonly L[];
  protected readonly series = new Map<string, S>();

  constructor(o: Options<L>) {
    this.name = o.name;
    this.help = o.help;
    this.labelNames = o.labelNames ?? [];
    for (const r of o.registers) r.registerMetric(this as never);
  }

  /** The series of one label set: made on first use, the same object after. Keep it (no lookup per call). */
  labels(labels: LabelValues<L>): S {
    let key = '';
    for (const n of this.labelNames) key += `${String(labels[n])}\u0000`;
    let s = this.series.get(key);
    if (s === undefined) {
      const own = {} as LabelValues<L>;
      for (const n of this.labelNames) own[n] = labels[n];
      s = this.make(own);
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract make(labels: LabelValues<L>): S;

  /** What the Registry prints (the samples of every series). */
  abstract getForPromString(): Promise<Exported>;

  /** What the Registry's JSON holds: each sample's labels in one object. */
  async get(): Promise<Exported> {
    const e = await this.getForPromString();
    return {
      ...e,
      values: e.values.map((v) => ({ value: v.value, labels: { ...v.sharedLabels, ...v.labels }, ...(v.metricName ? { metricName: v.metricName } : {}) })),
    };
  }

  /** Forget every series (the Registry's resetMetrics); series handed out before keep counting unseen. */
  reset(): void {
    this.series.clear();
  }
}

export interface CounterSeries<L extends string> {
  readonly labels: LabelValues<L>;
  value: number;
  inc(n?: number): void;
}

export class SeriesCounter<L extends string = string> extends SeriesMetric<L, CounterSeries<L>> {
  readonly type = 'counter';

  constructor(o: Options<L>) {
    super(o);
    // Without labels the one series is printed from the start (0), as prom-client's is.
    if (o.labelNames === undefined || o.labelNames.length === 0) this.labels({} as LabelValues<L>);
  }

  protected make(labels: LabelValues<L>): CounterSeries<L> {
    return {
      labels,
      value: 0,
      inc(n = 1) {
        // A counter only goes up (prom-client throws on a negative increment; an observer must not).
        if (n > 0) this.value += n;
      },
    };
  }

  /** Add `n` to a label set's series, or to the one series of a counter without labels (a lookup: keep `labels()`'s result on hot paths). */
  inc(labels: LabelValues<L> | number = 1, n = 1): void {
    if (typeof labels === 'number') this.labels({} as LabelValues<L>).inc(labels);
    else this.labels(labels).inc(n);
  }

  async getForPromString(): Promise<Exported> {
    const values: Sample[] = [];
    for (const s of this.series.values()) values.push({ value: s.value, labels: s.labels });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export interface HistogramSeries<L extends string> {
  readonly labels: LabelValues<L>;
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly counts: number[];
  sum: number;
  count: number;
  observe(value: number): void;
}

export class SeriesHistogram<L extends string = string> extends SeriesMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(o: Options<L> & { buckets: readonly number[] }) {
    super(o);
    this.bounds = [...o.buckets].sort((a, b) => a - b);
    if (o.labelNames === undefined || o.labelNames.length === 0) this.labels({} as LabelValues<L>);
  }

  protected make(labels: LabelValues<L>): HistogramSeries<L> {
    const bounds = this.bounds;
    return {
      labels,
      counts: new Array<number>(bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
      observe(value) {
        if (!Number.isFinite(value)) return;
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        this.counts[i]!++;
        this.sum += value;
        this.count++;
      },
    };
  }

  /** Observe one value in a label set's series, or in the one series of a histogram without labels (a lookup: keep `labels()`'s result on hot paths). */
  observe(labels: LabelValues<L> | number, value = 0): void {
    if (typeof labels === 'number') this.labels({} as LabelValues<L>).observe(labels);
    else this.labels(labels).observe(value);
  }

  async getForPromString(): Promise<Exported> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ value: acc, labels: { le }, sharedLabels: s.labels, metricName: bucket });
      });
      values.push({ value: s.count, labels: { le: '+Inf' }, sharedLabels: s.labels, metricName: bucket });
      values.push({ value: s.sum, labels: {}, sharedLabels: s.labels, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels: {}, sharedLabels: s.labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
