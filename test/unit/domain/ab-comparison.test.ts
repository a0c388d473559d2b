import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareMeans, compareRates } from '../../../src/domain/ab-comparison.ts';

const near = (actual: number | null | undefined, expected: number, tolerance = 1e-4) =>
  assert.ok(actual !== null && actual !== undefined && Math.abs(actual - expected) < tolerance, `${actual} ≈ ${expected}`);

test('compareRates: 60/200 against 30/200 is a +100% lift with the log risk-ratio interval and the pooled z-test p-value', () => {
  const c = compareRates(60, 200, 30, 200);
  assert.deepEqual([c.service, c.control, c.lift], [{ value: 0.3, n: 200 }, { value: 0.15, n: 200 }, 1]);
  // se = √(1/60 − 1/200 + 1/30 − 1/200) = 0.2 exactly; interval 2·e^(±1.96·0.2) − 1.
  near(c.ci95![0], 2 * Math.exp(-1.959964 * 0.2) - 1);
  near(c.ci95![1], 2 * Math.exp(1.959964 * 0.2) - 1);
  // z = 0.15 / √(0.225 · 0.775 · 0.01) = 3.5921 → two-sided p = 0.000328.
  near(c.p_value, 0.000328, 2e-5);
});

test('compareRates: no control successes gives no lift and no interval; no impressions gives no value', () => {
  const c = compareRates(5, 100, 0, 100);
  assert.equal(c.lift, null);
  assert.equal(c.ci95, null);
  assert.ok(c.p_value !== null && c.p_value < 0.05);
  const empty = compareRates(0, 0, 3, 10);
  assert.deepEqual([empty.service.value, empty.lift, empty.ci95, empty.p_value], [null, null, null, null]);
});

test('compareMeans: revenue per unit by the delta method on the log ratio of means', () => {
  // Service: 16 of 40 units spent 10 (mean 4); control: 8 of 40 (mean 2).
  const c = compareMeans({ n: 40, sum: 160, sumSq: 1600 }, { n: 40, sum: 80, sumSq: 800 });
  assert.deepEqual([c.service, c.control, c.lift], [{ value: 4, n: 40 }, { value: 2, n: 40 }, 1]);
  const v1 = (1600 - 40 * 16) / 39;
  const v2 = (800 - 40 * 4) / 39;
  const se = Math.sqrt(v1 / (40 * 16) + v2 / (40 * 4));
  near(c.ci95![0], 2 * Math.exp(-1.959964 * se) - 1);
  near(c.ci95![1], 2 * Math.exp(1.959964 * se) - 1);
  near(c.p_value, 0.0483, 0.002); // z = 2 / √(v1/40 + v2/40) = 1.9748
});

test('compareMeans: an empty group has no value, lift or interval', () => {
  const c = compareMeans({ n: 10, sum: 50, sumSq: 500 }, { n: 0, sum: 0, sumSq: 0 });
  assert.deepEqual([c.control.value, c.lift, c.ci95, c.p_value], [null, null, null, null]);
});
