// builder/item-indices.ts on real LMDB: a chunk's missing items get dense new indices (one per
// item, however often it appears), known ones keep theirs, and a cold cache reads the same back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ItemIndices } from '../../../src/builder/item-indices.ts';
import { withModelStore } from '../../helpers/model-store.ts';

type Named = readonly (readonly [string, string] | undefined)[];
/** resolve()'s parallel arrays from (type, id) pairs. */
const resolveNamed = (indices: ItemIndices, items: Named) => indices.resolve('demo', items.map((it) => it?.[0]), items.map((it) => it?.[1] ?? ''));

test('missing items of a chunk get dense indices once each; known ones and a cold cache agree', async () => {
  await withModelStore((store) => {
    const indices = new ItemIndices(store);
    assert.deepEqual(resolveNamed(indices, [['article', 'a'], undefined, ['article', 'b'], ['article', 'a']]), [0, undefined, 1, 0]);
    // a and b known; c twice and d new, among them.
    const chunk = [['article', 'c'], ['article', 'a'], ['article', 'c'], undefined, ['video', 'd'], ['article', 'b']] as const;
    assert.deepEqual(resolveNamed(indices, chunk), [2, 0, 2, undefined, 3, 1]);
    assert.deepEqual(resolveNamed(indices, chunk), [2, 0, 2, undefined, 3, 1], 'all from the cache');
    assert.deepEqual(resolveNamed(new ItemIndices(store), [...chunk, ['article', 'e']]), [2, 0, 2, undefined, 3, 1, 4], 'read back from LMDB');
  });
});
