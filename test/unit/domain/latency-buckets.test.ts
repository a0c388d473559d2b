import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bucketUpperMs, LATENCY_BUCKETS, latencyBucket, latencyQuantile } from '../../../src/domain/latency-buckets.ts';

test('a latency falls in the bucket whose upper bound is the first at or above it, at most 25% above', () => {
  for (const ms of [0.06, 0.3, 1, 2.5, 17, 480, 9000]) {
    const b = latencyBucket(ms);
    assert.ok(bucketUpperMs(b) >= ms && bucketUpperMs(b) <= ms * 1.25 + 1e-9, `${ms} ms → bucket ${b} (≤ ${bucketUpperMs(b)})`);
  }
  assert.equal(latencyBucket(0), 0);
  assert.equal(latencyBucket(1e9), LATENCY_BUCKETS - 1);
});

test('quantiles of a histogram: the bucket holding the ranked latency; null when empty', () => {
  const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
  assert.equal(latencyQuantile(counts, 0.5), null);
  for (let i = 0; i < 90; i++) counts[latencyBucket(1)]! += 1;
  for (let i = 0; i < 10; i++) counts[latencyBucket(100)]! += 1;
  assert.equal(latencyQuantile(counts, 0.5), Math.round(bucketUpperMs(latencyBucket(1)) * 100) / 100);
  assert.equal(latencyQuantile(counts, 0.9), Math.round(bucketUpperMs(latencyBucket(1)) * 100) / 100);
  assert.equal(latencyQuantile(counts, 0.99), Math.round(bucketUpperMs(latencyBucket(100)) * 100) / 100);
});
