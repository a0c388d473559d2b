// The offline evaluation's metrics, splits and random numbers (src/eval/) on small cases worked
// out by hand, and numpy's first MT19937 draws, so the eval follows the recommenders protocol.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rankingMetrics } from '../../../src/eval/metrics.ts';
import { Mt19937 } from '../../../src/eval/mt19937.ts';
import { chronologicalByUser, lastByUser, roundHalfEven, stratifiedByItem, type Interaction } from '../../../src/eval/split.ts';

const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} is not ${expected}`);
const sets = (o: Record<string, string[]>) => new Map(Object.entries(o).map(([u, items]) => [u, new Set(items)]));
const lists = (o: Record<string, string[]>) => new Map(Object.entries(o));

test('one user, hits at ranks 1 and 3 of 3 relevant, k = 3: precision, recall, nDCG and MAP by hand', () => {
  const m = rankingMetrics(sets({ u: ['a', 'b', 'c'] }), lists({ u: ['a', 'x', 'b'] }), 3);
  close(m.precisionAtK, 2 / 3);
  close(m.recallAtK, 2 / 3);
  // DCG = 1/ln 2 + 1/ln 4; ideal = 1/ln 2 + 1/ln 3 + 1/ln 4.
  close(m.ndcgAtK, (1 / Math.log(2) + 1 / Math.log(4)) / (1 / Math.log(2) + 1 / Math.log(3) + 1 / Math.log(4)));
  // Precision at each hit: 1/1 and 2/3, over the 3 relevant items.
  close(m.map, (1 + 2 / 3) / 3);
  assert.equal(m.users, 1);
});

test('MAP divides by every relevant item, nDCG ideal by at most k of them', () => {
  const m = rankingMetrics(sets({ u: ['a', 'b', 'c', 'd', 'e'] }), lists({ u: ['x', 'a'] }), 2);
  close(m.map, 1 / 2 / 5);
  close(m.ndcgAtK, 1 / Math.log(3) / (1 / Math.log(2) + 1 / Math.log(3)));
  close(m.precisionAtK, 1 / 2);
  close(m.recallAtK, 1 / 5);
});

test('users without a prediction are left out; users with predictions but no hit count as 0', () => {
  const relevant = sets({ hit: ['a'], miss: ['b'], unpredicted: ['c'] });
  const m = rankingMetrics(relevant, lists({ hit: ['a'], miss: ['z'], other: ['c'] }), 1);
  assert.equal(m.users, 2);
  close(m.precisionAtK, 1 / 2);
  close(m.recallAtK, 1 / 2);
  close(m.ndcgAtK, 1 / 2);
  close(m.map, 1 / 2);
});

test('precision divides by k even when fewer than k items were predicted', () => {
  const m = rankingMetrics(sets({ u: ['a'] }), lists({ u: ['a'] }), 10);
  close(m.precisionAtK, 1 / 10);
  close(m.recallAtK, 1);
  close(m.ndcgAtK, 1);
});

test('Mt19937(42) draws what numpy.random.seed(42); numpy.random.rand() draws', () => {
  const rng = new Mt19937(42);
  const draws = Array.from({ length: 5 }, () => rng.random());
  assert.deepEqual(draws, [0.3745401188473625, 0.9507143064099162, 0.7319939418114051, 0.5986584841970366, 0.15601864044243652]);
});

test('stratified split by item: round(0.75 · c) of each item\'s c rows train (half to even, as pandas), chosen by the seeded draws', () => {
  const rows: Interaction[] = [];
  for (let i = 0; i < 4; i++) rows.push({ user: `u${i}`, item: 'four', t: i });
  rows.push({ user: 'u0', item: 'one', t: 9 });
  rows.push({ user: 'u0', item: 'two', t: 9 }, { user: 'u1', item: 'two', t: 9 });
  for (let i = 0; i < 6; i++) rows.push({ user: `u${i}`, item: 'six', t: i });
  const { train, test: held } = stratifiedByItem(rows, 0.75, 42);
  assert.equal(train.filter((r) => r.item === 'four').length, 3);
  assert.equal(train.filter((r) => r.item === 'one').length, 1, 'a single rating: round(0.75) = 1 trains');
  assert.equal(train.filter((r) => r.item === 'two').length, 2, 'round(1.5) = 2');
  assert.equal(train.filter((r) => r.item === 'six').length, 4, 'round(4.5) = 4, half to even');
  // Draws for the four rows: 0.3745, 0.9507, 0.7320, 0.5987: the largest (row u1) is tested.
  assert.deepEqual(held.filter((r) => r.item === 'four').map((r) => r.user), ['u1']);
});

test('roundHalfEven rounds as Python does', () => {
  assert.deepEqual([0.5, 1.5, 2.5, 4.5, 0.75, 2.25, 3.5000001].map(roundHalfEven), [0, 2, 2, 4, 1, 2, 4]);
});

test('chronological split by user: the last 20% of each user\'s rows test, ties in input order', () => {
  const rows: Interaction[] = [5, 1, 3, 3, 2].map((t, i) => ({ user: 'u', item: `i${i}`, t }));
  const { train, test: held } = chronologicalByUser(rows, 0.8);
  assert.deepEqual(held.map((r) => r.item), ['i0']);
  assert.deepEqual(train.map((r) => r.item), ['i1', 'i4', 'i2', 'i3']);
});

test('leave-last-out by user: each user\'s latest row tests; a user of one row only trains', () => {
  const rows: Interaction[] = [
    { user: 'a', item: 'x', t: 3 },
    { user: 'a', item: 'y', t: 1 },
    { user: 'a', item: 'z', t: 2 },
    { user: 'b', item: 'x', t: 5 },
  ];
  const { train, test: held } = lastByUser(rows);
  assert.deepEqual(held.map((r) => `${r.user}${r.item}`), ['ax']);
  assert.deepEqual(train.map((r) => `${r.user}${r.item}`).sort(), ['ay', 'az', 'bx']);
});
