import assert from 'node:assert/strict';
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import { test } from 'node:test';
import { consumedEntries } from '../../../src/serving/notices.ts';
import { RECENT_STRIDE, RecentConsumption } from '../../../src/serving/recent-consumption.ts';

const weights = { detail_pageview: 1, purchase: 5 };
const view = (item: string, who: Record<string, unknown>) => ({
  event_type: 'detail_pageview',
  action_item: item,
  action_item_type: 'article',
  ...who,
});
const ROTATE_MS = 30_000;
/** Items a..z are ix 0..25; anything else is unknown. */
const resolve = (_type: string, id: string) => (/^[a-z]$/.test(id) ? id.charCodeAt(0) - 97 : undefined);
/** [ix, unix sec, weight] of each readable entry (unknown items left out). */
const triples = (entries: readonly (number | string)[] | undefined) => {
  const out: number[] = [];
  for (let i = 0; entries && i < entries.length; i += RECENT_STRIDE) if ((entries[i] as number) >= 0) out.push(entries[i] as number, entries[i + 1] as number, entries[i + 2] as number);
  return out;
};
const ids = (entries: readonly (number | string)[] | undefined) => {
  const t = triples(entries);
  const out: string[] = [];
  for (let i = 0; i < t.length; i += 3) out.push(String.fromCharCode(97 + t[i]!));
  return out;
};

function recorded(events: Array<Record<string, unknown>>, nowMs: number, recent = new RecentConsumption(nowMs), environment = 'demo') {
  recent.record(environment, consumedEntries(events as never, weights, nowMs), nowMs);
  return recent;
}

test('consumption is found by user and by device, with its time and event weight', () => {
  const recent = recorded([view('a', { user_id: 'u1', device_id: 'd1' }), { event_type: 'purchase', action_item: 'b', action_item_type: 'article', user_id: 'u1' }], 10_000);
  assert.deepEqual(triples(recent.ofUser('demo', 'u1', resolve)), [0, 10, 1, 1, 10, 5]);
  assert.deepEqual(triples(recent.ofDevice('demo', 'd1', resolve)), [0, 10, 1]);
  assert.equal(recent.ofUser('shop', 'u1', resolve), undefined);
  assert.equal(recent.ofDevice('demo', 'other', resolve), undefined);
});

test('the same id as a user and as a device, and in two environments, keeps four separate lists', () => {
  const recent = recorded([view('a', { user_id: 'x', device_id: 'x' })], 10_000);
  recorded([view('b', { user_id: 'x' })], 10_000, recent, 'shop');
  recorded([view('c', { device_id: 'x' })], 10_000, recent, 'shop');
  assert.deepEqual(ids(recent.ofUser('demo', 'x', resolve)), ['a']);
  assert.deepEqual(ids(recent.ofDevice('demo', 'x', resolve)), ['a']);
  assert.deepEqual(ids(recent.ofUser('shop', 'x', resolve)), ['b']);
  assert.deepEqual(ids(recent.ofDevice('shop', 'x', resolve)), ['c']);
});

test('a generation holding 200,000 users and devices over all environments rotates', () => {
  const recent = new RecentConsumption(0);
  // 100,000 users with a device each (200,000 keys), half in each environment, within one second.
  for (const environment of ['demo', 'shop']) {
    const events = Array.from({ length: 50_000 }, (_, i) => view('a', { user_id: `u${i}`, device_id: `d${i}` }));
    recorded(events, 1000, recent, environment);
  }
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', resolve)), ['a']);
  // The next record rotates: the full generation becomes the older one, still read, then dropped.
  recorded([view('b', { user_id: 'u1' })], 1000, recent);
  assert.deepEqual(ids(recent.ofUser('shop', 'u2', resolve)), ['a'], 'the older generation is still read');
  recorded([view('c', { user_id: 'late' })], ROTATE_MS + 2000, recent);
  assert.equal(recent.ofUser('shop', 'u2', resolve), undefined, 'two rotations later it is gone');
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', resolve)), ['a', 'b'], 'u1, seen again after the first rotation, carried its entry over');
});

test('no-consent devices, non-consumption events and unknown items record nothing', () => {
  const recent = recorded(
    [
      view('a', { device_id: 'no-consent' }),
      { event_type: 'impression', action_item: 'c', action_item_type: 'article', user_id: 'u1' },
      view('not-an-item', { user_id: 'u1' }),
    ],
    0,
  );
  assert.equal(recent.ofDevice('demo', 'no-consent', resolve), undefined);
  assert.deepEqual(triples(recent.ofUser('demo', 'u1', resolve)), [], 'the unknown item is kept unread, nothing else');
});

test('an entry outlives one rotation and is gone after two', () => {
  const start = Date.now();
  const recent = recorded([view('a', { user_id: 'u1' })], start);
  recorded([view('b', { user_id: 'u2' })], start + ROTATE_MS, recent); // rotates: u1 now in the older generation
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', resolve)), ['a']);
  recorded([view('c', { user_id: 'u1' })], start + ROTATE_MS + 1, recent); // carried over with the new one
  recorded([view('d', { user_id: 'u3' })], start + 2 * ROTATE_MS + 1, recent); // rotates again
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', resolve)), ['a', 'c']);
  assert.deepEqual(ids(recent.ofUser('demo', 'u2', resolve)), ['b'], 'one rotation since u2 was seen');
  recorded([view('e', { user_id: 'u3' })], start + 3 * ROTATE_MS + 2, recent); // and again
  assert.equal(recent.ofUser('demo', 'u2', resolve), undefined, 'two rotations since u2 was seen');
  assert.equal(recent.ofUser('demo', 'u1', resolve), undefined, 'two rotations since u1 was seen');
  assert.deepEqual(ids(recent.ofUser('demo', 'u3', resolve)), ['d', 'e']);
});

test('a user seen in every generation keeps only the last two rotations of entries, not the last 50 for ever', () => {
  const start = Date.now();
  const recent = new RecentConsumption(start);
  // Five views a rotation for 40 rotations: every rotation carries the user over.
  const step = ROTATE_MS / 5;
  for (let n = 0; n < 200; n++) recorded([view(String.fromCharCode(97 + (n % 26)), { user_id: 'u1' })], start + n * step, recent);
  const kept = recent.ofUser('demo', 'u1', resolve)!;
  // Carried: under two rotations old; plus up to one rotation recorded since: 15 views at most.
  assert.ok(kept.length / RECENT_STRIDE <= 16, `kept ${kept.length / RECENT_STRIDE} entries`);
  assert.equal(kept[kept.length - RECENT_STRIDE], 199 % 26, 'the newest is kept');
});

test('items are resolved when a request first reads them, once each, and never for entries nobody reads', () => {
  const calls: string[] = [];
  const counting = (type: string, id: string) => (calls.push(id), resolve(type, id));
  const recent = recorded([view('a', { user_id: 'u1' }), view('b', { user_id: 'u1' }), view('c', { user_id: 'u2' }), view('not-an-item', { user_id: 'u1' })], 10_000);
  assert.deepEqual(calls, [], 'recording resolves nothing');
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', counting)), ['a', 'b']);
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', counting)), ['a', 'b']);
  assert.deepEqual(calls, ['a', 'b', 'not-an-item'], 'each entry of u1 once; u2 never read');
  recorded([view('d', { user_id: 'u1' })], 10_001, recent);
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', counting)), ['a', 'b', 'd']);
  assert.deepEqual(calls, ['a', 'b', 'not-an-item', 'd'], 'only the new entry');
});

test('over many rotations, with the pool reusing the slots of dropped generations, every read is what per-key lists would hold', () => {
  // The reference: a list per key and generation, carried over and cut back as the module says.
  type Kept = Array<[item: string, sec: number]>;
  let current = new Map<string, Kept>();
  let previous = new Map<string, Kept>();
  const start = Date.parse('2026-11-27T00:00:00Z');
  const recent = new RecentConsumption(start);
  let rotatedAt = start;
  const random = mulberry32(7);
  // 30,000 entries 10 ms apart (3,000 a rotation), 40,000 1 ms apart (30,000 a rotation: the
  // pool, 16,384 slots at first, grows past live slots), then 30,000 300 ms apart (it reuses
  // the slots of dropped generations, and links into them are not followed).
  let nowMs = start;
  for (let step = 0; step < 100_000; step++) {
    nowMs += step < 30_000 ? 10 : step < 70_000 ? 1 : 300;
    const user = `u${Math.floor(random() * 40)}`;
    const item = String.fromCharCode(97 + Math.floor(random() * 26));
    recorded([view(item, { user_id: user })], nowMs, recent);
    if (nowMs - rotatedAt >= ROTATE_MS) [previous, current, rotatedAt] = [current, new Map(), nowMs];
    let list = current.get(user);
    if (!list) {
      list = (previous.get(user) ?? []).filter(([, sec]) => sec >= (nowMs - 2 * ROTATE_MS) / 1000);
      current.set(user, list);
    }
    list.push([item, Math.floor(nowMs / 1000)]);
    if (list.length > 50) list.splice(0, list.length - 50);
    if (step % 499 === 0) {
      for (let u = 0; u < 40; u++) {
        const expected = current.get(`u${u}`) ?? previous.get(`u${u}`);
        const read = recent.ofUser('demo', `u${u}`, resolve);
        assert.deepEqual(read === undefined ? undefined : ids(read), expected?.map(([i]) => i), `u${u} at step ${step}`);
        if (read) assert.deepEqual(triples(read).filter((_, k) => k % 3 === 1), expected!.map(([, sec]) => sec));
      }
    }
  }
});

test("items the worker's view knows are resolved as they are recorded; the others when first read", () => {
  const calls: string[] = [];
  const counting = (type: string, id: string) => (calls.push(id), resolve(type, id));
  const recent = new RecentConsumption(10_000);
  // The view knows a and b (as ix 0 and 1), not c (added to the catalog later) nor the unknown item.
  const inView = (_type: string, id: string) => (id === 'a' || id === 'b' ? resolve(_type, id) : undefined);
  const events = [view('a', { user_id: 'u1', device_id: 'd1' }), view('c', { user_id: 'u1' }), view('b', { user_id: 'u1' }), view('not-an-item', { user_id: 'u1' })];
  recent.record('demo', consumedEntries(events as never, weights, 10_000), 10_000, inView);
  assert.deepEqual(ids(recent.ofUser('demo', 'u1', counting)), ['a', 'c', 'b']);
  assert.deepEqual(calls, ['c', 'not-an-item'], 'only what the view did not know, at the read');
  assert.deepEqual(ids(recent.ofDevice('demo', 'd1', counting)), ['a']);
  assert.deepEqual(calls, ['c', 'not-an-item'], 'the device read resolves nothing more');
});
