/**
 * @module builder/builder-histograms
 * What the builder measures of itself, as prom-client histograms in the builder thread's own
 * registry; their JSON form travels with the builder's stats and the main thread's /metrics merges
 * it. /health's p50/p99 are read off the same buckets (the upper bound of the bucket holding the
 * rank, capped at the largest value seen).
 * - lag: how long events wait between their 200 and the builder's commit (the real-time
 *   contract, ≤ 1 s at p99, is read off it);
 * - flush: how long one flush holds the builder's thread (encoding what changed and writing it
 *   in one synchronous transaction): its CPU time, plus whatever time the OS gave the core to
 *   another thread meanwhile, so an upper bound of it. Issue 12 asks periodic commits to cost
 *   under 1 ms each, and the builder paces its flushes by it while it catches up.
 */
import { Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { COMMIT_BUCKETS, MsHistogram } from '../metrics/ms-histogram.ts';

/** Seconds: 1 s is the contract, the finer buckets below it show how close the builder runs. */
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30, 60];

export class BuilderHistograms {
  readonly #registry = new Registry();
  readonly lag = new MsHistogram('affinity_builder_lag_seconds', "Time from an event's 200 to the model builder's commit of it", LAG_BUCKETS, this.#registry);
  readonly flush = new MsHistogram(
    'affinity_builder_flush_seconds',
    "Time one flush holds the model builder's thread (encoding what changed and writing it in one transaction)",
    COMMIT_BUCKETS,
    this.#registry,
  );

  /** The histograms in prom-client's JSON form, for the main thread's /metrics. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    return this.#registry.getMetricsAsJSON();
  }
}
