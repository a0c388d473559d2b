/**
 * @module metrics/ms-histogram
 * A prom-client histogram observed in ms, with the summary /health shows: count, p50 and p99 read
 * off the buckets (the upper bound of the bucket holding the rank, capped at the largest value
 * seen) and that largest value. For what the service times itself (the builder's lag and
 * flushes, the request counter's commits), not for requests (request-histogram.ts).
 */
import { Histogram, type Registry } from 'prom-client';

/** Seconds a periodic commit holds its thread: 1 ms is issue 12's target; a builder flush catching up at 1M events takes seconds. */
export const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface MsSummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** One histogram observed in ms; its own bucket counts and largest value give the summary without an await. */
export class MsHistogram {
  readonly #histogram: Histogram;
  /** Bucket upper bounds, ms; counts has one more, for the values above them all. */
  readonly #boundsMs: number[];
  readonly #counts: Float64Array;
  #count = 0;
  #max = 0;

  constructor(name: string, help: string, buckets: number[], registry: Registry) {
    this.#histogram = new Histogram({ name, help, buckets, registers: [registry] });
    this.#boundsMs = buckets.map((s) => s * 1000);
    this.#counts = new Float64Array(buckets.length + 1);
  }

  /** Values recorded. */
  get count(): number {
    return this.#count;
  }

  record(ms: number): void {
    const value = Math.max(0, ms);
    this.#histogram.observe(value / 1000);
    let b = 0;
    while (b < this.#boundsMs.length && value > this.#boundsMs[b]!) b++;
    this.#counts[b]!++;
    this.#count++;
    if (value > this.#max) this.#max = value;
  }

  /** Count and quantiles (bucket upper bounds, capped at the largest value seen), in ms. */
  summary(): MsSummary {
    const count = this.#count;
    const maxMs = Math.round(this.#max * 1000) / 1000;
    const quantile = (q: number) => {
      if (count === 0) return 0;
      const rank = Math.ceil(q * count);
      let seen = 0;
      for (let b = 0; b < this.#boundsMs.length; b++) {
        seen += this.#counts[b]!;
        if (seen >= rank) return Math.min(maxMs, this.#boundsMs[b]!);
      }
      return maxMs;
    };
    return { count, p50Ms: quantile(0.5), p99Ms: quantile(0.99), maxMs };
  }
}
