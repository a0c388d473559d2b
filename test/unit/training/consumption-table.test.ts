// training/consumption-table.ts: per (consumer, item) the strongest weight and, at equal weights,
// the latest time, against a Map of Maps (what training passes kept before) over many notes
// that grow the table through several rehashes.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConsumptionTable } from '../../../src/training/consumption-table.ts';

test('a stronger weight replaces the kept one with its time; an equal one keeps the latest time; a weaker changes nothing', () => {
  const t = new ConsumptionTable(4);
  t.note(1, 7, 2, 100);
  t.note(1, 7, 1, 500);
  assert.deepEqual([t.length, t.weight[0], t.sec[0]], [1, 2, 100]);
  t.note(1, 7, 2, 300);
  assert.deepEqual([t.weight[0], t.sec[0]], [2, 300]);
  t.note(1, 7, 2, 200);
  assert.equal(t.sec[0], 300);
  t.note(1, 7, 5, 50);
  assert.deepEqual([t.weight[0], t.sec[0]], [5, 50]);
  t.note(7, 1, 1, 1);
  assert.deepEqual([t.length, t.who[1], t.ix[1]], [2, 7, 1], '(7, 1) is another pair than (1, 7)');
});

test('200,000 notes over 40,000 pairs keep what a map per consumer keeps, in first-seen order', () => {
  const t = new ConsumptionTable();
  const reference = new Map<string, [number, number]>();
  const random = mulberry32(12345);
  // 24 bits: every value exact in f32.
  const next = () => Math.floor(random() * 16777216) / 16777216;
  for (let n = 0; n < 200_000; n++) {
    const who = Math.floor(next() * 2000);
    const ix = Math.floor(next() * 20);
    const weight = 1 + Math.floor(next() * 4);
    const sec = Math.floor(next() * 1000);
    t.note(who, ix, weight, sec);
    const key = `${who} ${ix}`;
    const seen = reference.get(key);
    if (!seen || weight > seen[0]) reference.set(key, [weight, sec]);
    else if (weight === seen[0] && sec > seen[1]) seen[1] = sec;
  }
  assert.equal(t.length, reference.size);
  const keys = [...reference.keys()];
  for (let e = 0; e < t.length; e++) {
    assert.equal(`${t.who[e]} ${t.ix[e]}`, keys[e], `entry ${e} in first-seen order`);
    assert.deepEqual([t.weight[e], t.sec[e]], reference.get(keys[e]!));
  }
});
