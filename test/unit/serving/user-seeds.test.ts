import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UserSeeds } from '../../../src/serving/user-seeds.ts';

test('a repeated item keeps its strongest weight and latest time; time 0 (now) wins', () => {
  const seeds = new UserSeeds();
  seeds.reset(10);
  seeds.add(3, 1, 100);
  seeds.add(5, 2, 50);
  seeds.add(3, 5, 80);
  seeds.add(5, 1, 0);
  assert.equal(seeds.count, 2);
  assert.deepEqual([...seeds.ix.subarray(0, 2)], [3, 5]);
  assert.deepEqual([...seeds.weight.subarray(0, 2)], [5, 2]);
  assert.deepEqual([...seeds.time.subarray(0, 2)], [100, 0]);
});

test('the most recent seeds come newest first; of equal times the one seen later (added later: newer) first', () => {
  const seeds = new UserSeeds();
  seeds.reset(100);
  const times = [5, 9, 0, 9, 1, 7, 9, 3];
  times.forEach((t, i) => seeds.add(10 + i, 1, t));
  const out = new Uint32Array(4);
  const n = seeds.mostRecent(4, out);
  const expected = times.map((t, i) => [t || Infinity, i] as const).sort((a, b) => b[0] - a[0] || b[1] - a[1]).slice(0, 4).map(([, i]) => i);
  assert.deepEqual([...out.subarray(0, n)], expected);
  assert.deepEqual(expected, [2, 6, 3, 1]);
});

test('a burst of events in one second seeds from its last ones, wherever the second boundary falls', () => {
  // 30 events in arrival order, split between two seconds at every possible point.
  for (let boundary = 0; boundary <= 30; boundary++) {
    const seeds = new UserSeeds();
    seeds.reset(100);
    for (let i = 0; i < 30; i++) seeds.add(i, 1, i < boundary ? 1000 : 1001);
    const out = new Uint32Array(10);
    const n = seeds.mostRecent(10, out);
    assert.deepEqual([...out.subarray(0, n)], [29, 28, 27, 26, 25, 24, 23, 22, 21, 20], `boundary ${boundary}`);
  }
});

test('a new request forgets the last one: seeds, consumed and reconsumable marks; items beyond the capacity grow the stamps', () => {
  const seeds = new UserSeeds();
  seeds.reset(4);
  seeds.add(1, 1, 1);
  seeds.markConsumed(1);
  seeds.markReconsumable(2);
  seeds.markConsumed(40);
  assert.ok(seeds.isConsumed(1) && seeds.isReconsumable(2) && seeds.isConsumed(40));
  seeds.reset(4);
  assert.equal(seeds.count, 0);
  assert.ok(!seeds.isConsumed(1) && !seeds.isReconsumable(2) && !seeds.isConsumed(40));
  seeds.add(1, 3, 7);
  assert.deepEqual([seeds.count, seeds.weight[0], seeds.time[0]], [1, 3, 7]);
});
