/**
 * @module metrics/request-histogram
 * The HTTP request counter and latency histogram, counted in typed arrays per route, method and
 * status and handed to prom-client only when Prometheus scrapes: prom-client's labelled
 * children build a label key string per observation (two per request, ~700 bytes of garbage and
 * a hash each). Registered as a plain prom-client metric object (`get()` answers what a
 * Histogram's would), so the exposition and Registry.merge treat it like any other.
 */
import type { MetricValueWithName, Registry } from 'prom-client';

/** Counts of one route, method and status: per bucket (not cumulative), then the sum and total. */
export interface RequestCounts {
  readonly labels: Readonly<Record<'route' | 'method' | 'status', string>>;
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

export class RequestHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #all: RequestCounts[] = [];

  constructor(name: string, help: string, bounds: readonly number[], registry: Registry) {
    this.name = name;
    this.help = help;
    this.#bounds = bounds;
    // prom-client's typings want one of its classes (and an enum where it reads the string
    // 'histogram'); the registry serves any object with these members alike.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The counts of one label set (kept by the caller: no lookup per observation). */
  counts(route: string, method: string, status: string): RequestCounts {
    const counts: RequestCounts = { labels: { route, method, status }, buckets: new Float64Array(this.#bounds.length), sum: 0, count: 0 };
    this.#all.push(counts);
    return counts;
  }

  observe(counts: RequestCounts, seconds: number): void {
    const bounds = this.#bounds;
    let b = 0;
    while (b < bounds.length && seconds > bounds[b]!) b++;
    if (b < bounds.length) counts.buckets[b]! += 1;
    counts.sum += seconds;
    counts.count += 1;
  }

  /** What prom-client's Histogram answers: cumulative `_bucket` samples by `le`, then `_sum` and `_count`. */
  get(): Promise<{ name: string; help: string; type: string; values: Array<MetricValueWithName<string>>; aggregator: string }> {
    const values: Array<MetricValueWithName<string>> = [];
    for (const c of this.#all) {
      let cumulative = 0;
      for (let b = 0; b < this.#bounds.length; b++) {
        cumulative += c.buckets[b]!;
        values.push({ labels: { le: this.#bounds[b]!, ...c.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { le: '+Inf', ...c.labels }, value: c.count, metricName: `${this.name}_bucket` });
      values.push({ labels: c.labels, value: c.sum, metricName: `${this.name}_sum` });
      values.push({ labels: c.labels, value: c.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    for (const c of this.#all) {
      c.buckets.fill(0);
      c.sum = 0;
      c.count = 0;
    }
  }
}
