// serving/trained-scores.ts seedRowScale: how much a history item's trained row counts in a
// history of n items under model.trained.shortHistoryItems k: divided by its largest |weight| to
// the power k/(k + n), so short histories weigh their items alike and long ones as learned.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seedRowScale } from '../../../src/serving/trained-scores.ts';

const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);

test('k 0 leaves every row as learned', () => {
  for (const n of [1, 5, 500]) assert.equal(seedRowScale(8, 0, n), 1);
});

test('k 2: a one-item history divides the row by largest^(2/3), two items by its square root, ten by largest^(1/6)', () => {
  close(seedRowScale(8, 2, 1), 0.25);
  close(seedRowScale(16, 2, 2), 0.25);
  close(seedRowScale(64, 2, 10), 0.5);
});

test('rows of different sizes come closer in a short history than in a long one', () => {
  const gap = (n: number) => (1 * seedRowScale(1, 2, n)) / (0.01 * seedRowScale(0.01, 2, n));
  assert.ok(gap(1) < gap(10) && gap(10) < gap(500) && gap(500) < 100);
  assert.ok(gap(500) > 90, 'a 500-item history sums its rows nearly as learned');
});

test('an empty or non-finite largest weight, or a history of 0 items, does not break the sum', () => {
  assert.equal(seedRowScale(0, 2, 3), 1);
  assert.equal(seedRowScale(Number.NaN, 2, 3), 1);
  assert.equal(seedRowScale(Infinity, 2, 3), 1);
  close(seedRowScale(8, 2, 0), 0.25);
});
