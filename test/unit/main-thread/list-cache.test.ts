import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LIST_OVERHEAD_ITEMS, ListCache, type CachedList } from '../../../src/main-thread/list-cache.ts';

/** Room for `ids` item ids in `lists` lists. */
const room = (ids: number, lists: number) => ids + lists * LIST_OVERHEAD_ITEMS;

const LIST: CachedList = {
  environment: 'demo',
  requestId: 'r',
  userGroup: 'affinity',
  deviceId: 'd',
  listName: 'popular',
  ids: 'a\nb\nc',
  ix: Uint32Array.of(0, 1, 2),
};

test('a stored list is found by its key until it expires, and only in its environment', () => {
  const cache = new ListCache(room(10, 1));
  const key = cache.put(LIST, 60, 1000);
  assert.match(key, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(cache.get('demo', key, 1000 + 59_999), LIST);
  assert.equal(cache.get('shop', key, 1000), undefined);
  assert.equal(cache.get('demo', key, 1000 + 60_000), undefined);
  assert.equal(cache.get('demo', 'unknown', 1000), undefined);
});

test('past maxItems item ids held, the oldest lists are dropped until the new one fits', () => {
  const cache = new ListCache(room(7, 2)); // two lists of 3 fit, a third needs the first's room
  const first = cache.put(LIST, 60, 0);
  const second = cache.put(LIST, 60, 0);
  const third = cache.put(LIST, 60, 0);
  assert.equal(cache.get('demo', first, 0), undefined);
  assert.ok(cache.get('demo', second, 0));
  assert.ok(cache.get('demo', third, 0));
  const long = cache.put({ ...LIST, ids: 'a\nb\nc\nd\ne\nf\ng', ix: Uint32Array.of(0, 1, 2, 3, 4, 5, 6) }, 60, 0);
  assert.equal(cache.get('demo', second, 0), undefined);
  assert.equal(cache.get('demo', third, 0), undefined);
  assert.equal(cache.get('demo', long, 0)?.ix.length, 7);
});

test('a list longer than the whole cache is not kept (its key answers 404), and the others stay', () => {
  const cache = new ListCache(room(4, 1));
  const kept = cache.put(LIST, 60, 0);
  const tooLong = cache.put({ ...LIST, ids: 'a\nb\nc\nd\ne', ix: Uint32Array.of(0, 1, 2, 3, 4) }, 60, 0);
  assert.equal(cache.get('demo', tooLong, 0), undefined);
  assert.ok(cache.get('demo', kept, 0));
});

test('expired lists free their room for new ones', () => {
  const cache = new ListCache(room(3, 1));
  const old = cache.put(LIST, 1, 0);
  const fresh = cache.put(LIST, 60, 2000);
  assert.equal(cache.get('demo', old, 2000), undefined);
  assert.ok(cache.get('demo', fresh, 2000));
});

test('each list counts its own overhead: many one-item lists do not fill more than the bound', () => {
  const cache = new ListCache(room(10, 5)); // five lists of up to 2 ids
  const keys = Array.from({ length: 6 }, () => cache.put({ ...LIST, ids: 'a', ix: Uint32Array.of(0) }, 60, 0));
  assert.equal(cache.get('demo', keys[0]!, 0), undefined, 'the sixth one-item list pushed out the first');
  for (const key of keys.slice(1)) assert.ok(cache.get('demo', key, 0));
});

test('lists put far past the cache size read back exactly while held (ids of any script), and the overwritten ones answer nothing', () => {
  const cache = new ListCache(room(40, 4));
  const put: Array<{ key: string; list: CachedList }> = [];
  for (let n = 0; n < 200; n++) {
    const count = n % 7;
    const ids = Array.from({ length: count }, (_, i) => (n % 3 === 0 ? `ид-${n}-${i}` : `id-${n}-${i}`));
    const list: CachedList = { ...LIST, requestId: `r${n}`, deviceId: `d${n}`, ...(n % 2 === 0 ? { userId: `u${n}` } : {}), ids: ids.join('\n'), ix: Uint32Array.from(ids, (_, i) => n * 10 + i) };
    put.push({ key: cache.put(list, 60, 0), list });
  }
  let held = 0;
  for (const [n, { key, list }] of put.entries()) {
    const got = cache.get('demo', key, 0);
    if (got === undefined) {
      assert.ok(n < put.length - 4, `list ${n} of the last four is gone`);
      continue;
    }
    held++;
    assert.deepEqual(got, list);
  }
  assert.ok(held >= 4 && held <= 40 / 4 + 4, `${held} lists held`);
  // The same slot with another tag (the last character carries tag bits only): not found.
  const last = put[put.length - 1]!.key;
  assert.equal(cache.get('demo', `${last.slice(0, 21)}${last.endsWith('A') ? 'Q' : 'A'}`, 0), undefined);
});

test('records of uneven sizes that fill the ring before the item budget: after every put, each key reads back its own list or nothing', () => {
  const cache = new ListCache(160); // 5,120 ring bytes; 1-item lists of 400–4,400 bytes bind the ring, not the budget
  const put: Array<{ key: string; list: CachedList }> = [];
  // First the sizes that once overwrote a live list (the fifth wrapped onto the fourth), then a spread.
  const lengths = [2970, 970, 970, 2470, 2670];
  for (let n = 0; n < 120; n++) {
    const id = `${n}-`.padEnd(lengths[n] ?? 400 + ((n * 977) % 1800), n < lengths.length || n % 2 === 0 ? 'x' : 'ж');
    const list: CachedList = { ...LIST, requestId: `r${n}`, deviceId: `d${n}`, ids: id, ix: Uint32Array.of(n) };
    put.push({ key: cache.put(list, 60, 0), list });
    for (const [m, held] of put.entries()) {
      const got = cache.get('demo', held.key, 0);
      if (m === n) assert.deepEqual(got, held.list, `the newest list ${n} reads back`);
      else if (got !== undefined) assert.deepEqual(got, held.list, `list ${m} after put ${n}`);
    }
  }
});
