import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentConsumption } from '../../../src/recommend/recent-consumption.ts';

const weights = new Map([['demo', { detail_pageview: 1, purchase: 5 }]]);
const view = (item: string, who: Record<string, unknown>) => ({
  event_type: 'detail_pageview',
  action_item: item,
  action_item_type: 'article',
  ...who,
});
const ROTATE_MS = 30_000;

test('consumption is found by user and by device, with its time and event weight', () => {
  const recent = new RecentConsumption(weights);
  recent.record('demo', [view('a', { user_id: 'u1', device_id: 'd1' }), { event_type: 'purchase', action_item: 'b', action_item_type: 'article', user_id: 'u1' }], 10_000);
  assert.deepEqual(recent.of('demo', 'u1', 'other'), [['article', 'a', 10, 1], ['article', 'b', 10, 5]]);
  assert.deepEqual(recent.of('demo', undefined, 'd1'), [['article', 'a', 10, 1]]);
  assert.deepEqual(recent.of('shop', 'u1', 'd1'), []);
});

test('no-consent devices, non-consumption events and unknown environments record nothing', () => {
  const recent = new RecentConsumption(weights);
  recent.record('demo', [view('a', { device_id: 'no-consent' }), { event_type: 'impression', action_item: 'c', action_item_type: 'article', user_id: 'u1' }], 0);
  recent.record('shop', [view('a', { user_id: 'u1' })], 0);
  assert.deepEqual(recent.of('demo', 'u1', 'no-consent'), []);
});

test('an entry outlives one rotation and is gone after two', () => {
  const recent = new RecentConsumption(weights);
  const start = Date.now();
  recent.record('demo', [view('a', { user_id: 'u1' })], start);
  recent.record('demo', [view('b', { user_id: 'u2' })], start + ROTATE_MS); // rotates: u1 now in the older generation
  assert.equal(recent.of('demo', 'u1', 'x').length, 1);
  recent.record('demo', [view('c', { user_id: 'u1' })], start + ROTATE_MS + 1); // carried over with the new one
  recent.record('demo', [view('d', { user_id: 'u3' })], start + 2 * ROTATE_MS + 1); // rotates again
  assert.deepEqual(recent.of('demo', 'u1', 'x').map((e) => e[1]), ['a', 'c']);
  assert.deepEqual(recent.of('demo', 'u2', 'x').map((e) => e[1]), ['b'], 'one rotation since u2 was seen');
  recent.record('demo', [view('e', { user_id: 'u3' })], start + 3 * ROTATE_MS + 2); // and again
  assert.deepEqual(recent.of('demo', 'u2', 'x'), [], 'two rotations since u2 was seen');
  assert.deepEqual(recent.of('demo', 'u1', 'x'), [], 'two rotations since u1 was seen');
  assert.deepEqual(recent.of('demo', 'u3', 'x').map((e) => e[1]), ['d', 'e']);
});

test('a user seen in every generation keeps only the last two rotations of entries, not the last 50 for ever', () => {
  const recent = new RecentConsumption(weights);
  const start = Date.now();
  // Five views a rotation for 40 rotations: every rotation carries the user over.
  const step = ROTATE_MS / 5;
  for (let n = 0; n < 200; n++) recent.record('demo', [view(`i${n}`, { user_id: 'u1' })], start + n * step);
  const kept = recent.of('demo', 'u1', 'x').map((e) => e[1]);
  // Carried: under two rotations old; plus up to one rotation recorded since: 15 views at most.
  assert.ok(kept.length <= 16, `kept ${kept.length} entries: ${kept.join(' ')}`);
  assert.equal(kept.at(-1), 'i199', 'the newest is kept');
});
