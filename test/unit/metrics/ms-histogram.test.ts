// The summary /health shows of a self-timing histogram (metrics/ms-histogram.ts): quantiles are
// the upper bounds of the buckets holding their rank, capped at the largest value, and the
// Prometheus side counts the same observations in seconds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { MsHistogram } from '../../../src/metrics/ms-histogram.ts';

const BUCKETS = [0.001, 0.01, 0.1];

describe('MsHistogram', () => {
  test('is all zero before any observation', () => {
    const h = new MsHistogram('t_empty_seconds', 'test', BUCKETS, new Registry());
    assert.deepEqual(h.summary(), { count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });

  test('reads p50 and p99 off the buckets, capped at the largest value seen', async () => {
    const registry = new Registry();
    const h = new MsHistogram('t_cost_seconds', 'test', BUCKETS, registry);
    for (let i = 0; i < 98; i++) h.record(0.5); // ≤ 1 ms
    h.record(7); // ≤ 10 ms
    h.record(42); // ≤ 100 ms
    assert.deepEqual(h.summary(), { count: 100, p50Ms: 1, p99Ms: 10, maxMs: 42 });
    h.record(30);
    // 101 values: the 100th is in the ≤ 100 ms bucket, whose bound is capped at the 42 seen.
    assert.deepEqual(h.summary(), { count: 101, p50Ms: 1, p99Ms: 42, maxMs: 42 });
    const text = await registry.metrics();
    assert.match(text, /^t_cost_seconds_bucket\{le="0\.001"\} 98$/m);
    assert.match(text, /^t_cost_seconds_count 101$/m);
  });

  test('a value above every bucket is its own p99, and a negative one counts as 0', () => {
    const h = new MsHistogram('t_over_seconds', 'test', BUCKETS, new Registry());
    h.record(-3);
    h.record(2500);
    assert.deepEqual(h.summary(), { count: 2, p50Ms: 1, p99Ms: 2500, maxMs: 2500 });
  });
});
