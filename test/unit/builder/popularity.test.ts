// builder/popularity.ts on real LMDB: the arrays are stored as chunks, a flush writes only the
// chunks its events touched, what is read back equals the counts, and an array written whole by
// an earlier version is read and then replaced by its chunks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PopularityState, SECONDS_PER_BUCKET } from '../../../src/builder/popularity.ts';
import { POPULARITY_CHUNK_ITEMS, popularityKey, readPopularity } from '../../../src/store/model-layout.ts';
import type { Store } from '../../../src/store/open.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const NOW = Date.now();
const SEC = Math.floor(NOW / 1000);
const HOUR = Math.floor(SEC / SECONDS_PER_BUCKET);

/** The keys of one bucket's stored records (chunks and any whole array). */
function storedKeys(store: Store, bucket: number | 'all'): unknown[][] {
  const keys: unknown[][] = [];
  for (const key of store.model.getKeys({ start: ['demo', 'pop', bucket], end: ['demo', 'pop', bucket, Number.MAX_SAFE_INTEGER] })) keys.push(key as unknown[]);
  return keys;
}

async function flush(store: Store, state: PopularityState): Promise<void> {
  await store.model.transaction(state.prepareFlush(NOW));
}

test('a flush writes the chunks its events touched, and the arrays read back as counted', async () => {
  await withModelStore(async (store) => {
    const state = new PopularityState(store, 'demo');
    const expected = new Float32Array(10 * POPULARITY_CHUNK_ITEMS);
    const add = (ix: number, w: number) => {
      state.add(ix, SEC, w);
      expected[ix] = expected[ix]! + w;
    };
    add(3, 1);
    add(3 * POPULARITY_CHUNK_ITEMS + 5, 2);
    // An hour whose only chunk is the first.
    state.add(7, SEC - SECONDS_PER_BUCKET, 1.5);
    await flush(store, state);
    const earlier = readPopularity(store.model, 'demo', HOUR - 1);
    assert.equal(earlier.length, POPULARITY_CHUNK_ITEMS);
    assert.equal(earlier[7], 1.5);
    assert.deepEqual(storedKeys(store, 'all'), [['demo', 'pop', 'all', 0], ['demo', 'pop', 'all', 3]]);
    assert.deepEqual(storedKeys(store, HOUR), [['demo', 'pop', HOUR, 0], ['demo', 'pop', HOUR, 3]]);

    // The next flush rewrites chunk 9 alone: chunk 0 keeps its record as written before.
    const before = store.model.getEntry(['demo', 'pop', 'all', 0]);
    add(9 * POPULARITY_CHUNK_ITEMS + 255, 0.5);
    await flush(store, state);
    assert.deepEqual(storedKeys(store, 'all').map((k) => k[3]), [0, 3, 9]);
    assert.deepEqual(store.model.getEntry(['demo', 'pop', 'all', 0]), before);

    const all = readPopularity(store.model, 'demo', 'all');
    assert.equal(all.length, 10 * POPULARITY_CHUNK_ITEMS);
    // All-time holds the earlier hour's count too.
    const expectedAll = expected.slice();
    expectedAll[7] = 1.5;
    assert.deepEqual(all, expectedAll);
    assert.deepEqual(readPopularity(store.model, 'demo', HOUR), expected);
    // Into a larger scratch array: zeroed first, a view of its start.
    const scratch = new Float32Array(20 * POPULARITY_CHUNK_ITEMS).fill(7);
    const into = readPopularity(store.model, 'demo', 'all', scratch);
    assert.equal(into.buffer, scratch.buffer);
    assert.deepEqual(into, expectedAll);
    assert.equal(readPopularity(store.model, 'demo', HOUR - 5).length, 0, 'an hour without events is empty');
  });
});

test('an array written whole by an earlier version is read, counted on, and replaced by its chunks', async () => {
  await withModelStore(async (store) => {
    // 300 items (not a whole number of chunks), counts in chunks 0 and 1.
    const old = new Float32Array(300);
    old[1] = 4;
    old[290] = 2;
    await store.model.put(popularityKey('demo', 'all'), Buffer.from(old.buffer));
    const read = readPopularity(store.model, 'demo', 'all');
    assert.equal(read.length, 2 * POPULARITY_CHUNK_ITEMS);
    assert.equal(read[1], 4);
    assert.equal(read[290], 2);

    const state = new PopularityState(store, 'demo');
    state.add(1, SEC, 1);
    await flush(store, state);
    assert.deepEqual(storedKeys(store, 'all'), [['demo', 'pop', 'all', 0], ['demo', 'pop', 'all', 1]], 'the whole record is gone, both chunks written');
    const after = readPopularity(store.model, 'demo', 'all');
    assert.equal(after[1], 5);
    assert.equal(after[290], 2);
  });
});
