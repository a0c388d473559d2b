/**
 * @module model/lag-histogram
 * How long events wait between their 200 and the builder's commit: the real-time contract
 * (≤ 1 s at p99) is read off it. A prom-client histogram in the builder thread's own registry;
 * its JSON form travels with the builder's stats and the main thread's /metrics merges it.
 * /health's p50/p99 are read off the same buckets (the upper bound of the bucket holding the rank).
 */
import { Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** Seconds: 1 s is the contract, the finer buckets below it show how close the builder runs. */
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30, 60];

export interface LagSummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LagHistogram {
  readonly #registry = new Registry();
  readonly #histogram = new Histogram({
    name: 'affinity_builder_lag_seconds',
    help: 'Time from an event\'s 200 to the model builder\'s commit of it',
    buckets: LAG_BUCKETS,
    registers: [this.#registry],
  });
  #max = 0;

  record(lagMs: number): void {
    this.#histogram.observe(Math.max(0, lagMs) / 1000);
    if (lagMs > this.#max) this.#max = lagMs;
  }

  /** Counts and quantiles (bucket upper bounds, capped at the largest lag seen), in ms. */
  async summary(): Promise<LagSummary> {
    const { values } = await this.#histogram.get();
    const buckets = values.filter((v) => v.metricName === 'affinity_builder_lag_seconds_bucket');
    const count = buckets.find((v) => v.labels.le === '+Inf')?.value ?? 0;
    const maxMs = Math.round(this.#max);
    const quantile = (q: number) => {
      if (count === 0) return 0;
      const rank = Math.ceil(q * count);
      const hit = buckets.find((v) => v.value >= rank && v.labels.le !== '+Inf');
      return hit ? Math.min(maxMs, Number(hit.labels.le) * 1000) : maxMs;
    };
    return { count, p50Ms: quantile(0.5), p99Ms: quantile(0.99), maxMs };
  }

  /** The histogram in prom-client's JSON form, for the main thread's /metrics. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    return this.#registry.getMetricsAsJSON();
  }
}
