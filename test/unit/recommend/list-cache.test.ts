import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ListCache, type CachedList } from '../../../src/recommend/list-cache.ts';

const LIST: CachedList = {
  environment: 'demo',
  requestId: 'r',
  userGroup: 'affinity',
  deviceId: 'd',
  listName: 'popular',
  itemIds: ['a', 'b', 'c'],
};

test('a stored list is found by its key until it expires, and only in its environment', () => {
  const cache = new ListCache(10);
  const key = cache.put(LIST, 60, 1000);
  assert.match(key, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(cache.get('demo', key, 1000 + 59_999), LIST);
  assert.equal(cache.get('shop', key, 1000), undefined);
  assert.equal(cache.get('demo', key, 1000 + 60_000), undefined);
  assert.equal(cache.get('demo', 'unknown', 1000), undefined);
});

test('past maxEntries the oldest list is dropped', () => {
  const cache = new ListCache(2);
  const first = cache.put(LIST, 60, 0);
  const second = cache.put(LIST, 60, 0);
  const third = cache.put(LIST, 60, 0);
  assert.equal(cache.get('demo', first, 0), undefined);
  assert.ok(cache.get('demo', second, 0));
  assert.ok(cache.get('demo', third, 0));
});
