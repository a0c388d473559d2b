// Item keys (serving/item-keys.ts): each item reads back the ids it was given last, in their
// order, through rewrites that leave the pool mostly dead and force compactions; a key is
// interned once.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ItemKeys } from '../../../src/serving/item-keys.ts';

const idsOf = (keys: ItemKeys, ix: number) => Array.from(keys.pool.subarray(keys.start(ix), keys.start(ix) + keys.count(ix)));

test('a key is interned once; an unknown key has no id', () => {
  const keys = new ItemKeys();
  const a = keys.intern('c\u0000Books');
  assert.equal(keys.intern('t\u0000crime'), a + 1);
  assert.equal(keys.intern('c\u0000Books'), a);
  assert.equal(keys.idOf('t\u0000crime'), a + 1);
  assert.equal(keys.idOf('t\u0000never'), undefined);
  assert.deepEqual(keys.names, ['c\u0000Books', 't\u0000crime']);
});

test('every item reads back its last ids, in order, through rewrites and compactions', () => {
  const keys = new ItemKeys();
  const expected = new Map<number, number[]>();
  const random = mulberry32(7);
  const items = 5000;
  const pools = new Set<Uint32Array>();
  for (let write = 0; write < 200_000; write++) {
    const ix = Math.floor(random() * items);
    const ids = Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * 300));
    keys.set(ix, ids);
    expected.set(ix, ids);
    pools.add(keys.pool);
  }
  assert.ok(pools.size > 2, `the pool was replaced (${pools.size} pools): grown and compacted`);
  assert.ok(keys.pool.length < 200_000, `compacted: a pool of ${keys.pool.length} for ${items} items of ≤ 5 keys, not every write's`);
  for (let ix = 0; ix < items + 10; ix++) assert.deepEqual(idsOf(keys, ix), expected.get(ix) ?? [], `item ${ix}`);
});

test('an item set to no keys has none; one never set has none', () => {
  const keys = new ItemKeys();
  keys.set(3, [1, 2]);
  keys.set(3, []);
  assert.deepEqual(idsOf(keys, 3), []);
  assert.deepEqual(idsOf(keys, 2), []);
  assert.deepEqual(idsOf(keys, 1_000_000), []);
});
