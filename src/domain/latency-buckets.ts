/**
 * @module domain/latency-buckets
 * Fixed logarithmic latency buckets for the reporting counters: a histogram is a plain array of
 * counts, so days and hours add up element by element and a range's percentiles come from the
 * sum. Bucket i holds latencies up to FIRST_MS · GROWTH^i; the last one everything above.
 * Percentiles are reported as the bucket's upper bound: at most 25% above the true value. Pure.
 */

const FIRST_MS = 0.05;
const GROWTH = 1.25;
/** 0.05 ms to about 13 s, then one overflow bucket. */
export const LATENCY_BUCKETS = 57;

const LOG_GROWTH = Math.log(GROWTH);

/** The bucket of a latency in ms. */
export function latencyBucket(ms: number): number {
  if (!(ms > FIRST_MS)) return 0;
  return Math.min(LATENCY_BUCKETS - 1, Math.ceil(Math.log(ms / FIRST_MS) / LOG_GROWTH));
}

/** Upper bound of a bucket, ms (the overflow bucket reports its lower bound). */
export function bucketUpperMs(bucket: number): number {
  return FIRST_MS * GROWTH ** Math.min(bucket, LATENCY_BUCKETS - 2);
}

/** The q-quantile (0..1) of a histogram, ms, rounded to 0.01; null when it is empty. */
export function latencyQuantile(counts: ArrayLike<number>, q: number): number | null {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return Math.round(bucketUpperMs(i) * 100) / 100;
  }
  return Math.round(bucketUpperMs(counts.length - 1) * 100) / 100;
}
