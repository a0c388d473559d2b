// builder/item-layout.ts on real LMDB: content vectors are stored by chunk of VECTOR_CHUNK_ITEMS, a
// flush rewrites only the chunks of changed items (a deleted item's slot zeroed, a chunk left
// with no vector removed), and vectors saved one record per item by an earlier version are moved
// into chunks at the builder's start, computing the missing ones of items in the catalog. Both
// that move and the making of the item view records go on where a stopped start left them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { ItemLayoutState } from '../../../src/builder/item-layout.ts';
import { contentVector } from '../../helpers/content-vector.ts';
import { VECTOR_DIM } from '../../../src/ranker/reference-ranker.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { ITEM_VIEW_CHUNK_ITEMS, itemViewChunkKey, itemViewFingerprint, itemViewFingerprintKey, itemViewProgressKey, type StoredChunk } from '../../../src/store/item-view.ts';
import { ITEM_ENABLED, ITEM_IN_CATALOG, VECTOR_CHUNK_ITEMS, contentVectorChunkKey, contentVectorKey, itemLayoutKey } from '../../../src/store/model-layout.ts';
import type { Store } from '../../../src/store/open.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const N = VECTOR_CHUNK_ITEMS;
const itemOf = (id: string) => ({ environment: 'demo', item_id: id, item_type: 'article', title: `${id} jazz guitar festival review`, tags: [id] });

/** Puts `count` items i0, i1, … through the catalog (ix 0, 1, … in order). */
async function putItems(store: Store, count: number): Promise<Catalog> {
  const catalog = new Catalog(store);
  for (let i = 0; i < count; i++) await catalog.put(itemOf(`i${i}`));
  return catalog;
}

/** Applies the whole change feed after `after` and writes it, as the builder's flush does. */
function applyAndFlush(store: Store, layout: ItemLayoutState, catalog: Catalog, after: number): number {
  store.resetReadTxns();
  const changes = catalog.changesSince(after, 10_000);
  layout.apply(changes);
  store.modelRoot.transactionSync(layout.prepareFlush());
  store.resetReadTxns();
  return changes.at(-1)?.seq ?? after;
}

function chunkKeys(store: Store): number[] {
  return [...store.model.getKeys({ start: contentVectorChunkKey('demo', 0), end: contentVectorChunkKey('demo', 0xffffffff) })].map((k) => (k as number[])[2]!);
}

function slot(store: Store, ix: number): number[] {
  const bytes = store.model.get(contentVectorChunkKey('demo', Math.floor(ix / N)));
  assert.ok(bytes, `chunk of ix ${ix} is stored`);
  const chunk = new Float32Array(new Uint8Array(bytes).buffer);
  return Array.from(chunk.subarray((ix % N) * VECTOR_DIM, (ix % N + 1) * VECTOR_DIM));
}

const expectedVector = (id: string) => Array.from(contentVector(itemOf(id))!);

test('a flush writes each item vector into its chunk, rewrites only changed chunks, zeroes deleted slots and drops empty chunks', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: ENVIRONMENT_DEFAULTS };
    const layout = new ItemLayoutState(store, environments);
    const catalog = await putItems(store, 2 * N + 1);
    let seq = applyAndFlush(store, layout, catalog, 0);
    assert.deepEqual(chunkKeys(store), [0, 1, 2]);
    for (const ix of [0, N - 1, N, 2 * N]) assert.deepEqual(slot(store, ix), expectedVector(`i${ix}`));
    assert.deepEqual(store.model.getKeysCount({ start: contentVectorKey('demo', 0), end: contentVectorKey('demo', 0xffffffff) }), 0, 'no record per item');

    // Changing one item of chunk 1 rewrites chunk 1 alone.
    const chunk0 = Buffer.from(store.model.get(contentVectorChunkKey('demo', 0))!);
    const chunk2 = Buffer.from(store.model.get(contentVectorChunkKey('demo', 2))!);
    await catalog.put({ ...itemOf(`i${N + 1}`), title: 'a changed title about cooking' });
    await catalog.remove('demo', 'article', `i${N + 2}`);
    seq = applyAndFlush(store, layout, catalog, seq);
    assert.deepEqual(Buffer.from(store.model.get(contentVectorChunkKey('demo', 0))!), chunk0);
    assert.deepEqual(Buffer.from(store.model.get(contentVectorChunkKey('demo', 2))!), chunk2);
    assert.deepEqual(slot(store, N + 1), Array.from(contentVector({ ...itemOf(`i${N + 1}`), title: 'a changed title about cooking' })!));
    assert.deepEqual(slot(store, N + 2), new Array(VECTOR_DIM).fill(0));
    assert.deepEqual(slot(store, N + 3), expectedVector(`i${N + 3}`));

    // The last item of chunk 2 deleted: nothing left in it, so the chunk is gone.
    await catalog.remove('demo', 'article', `i${2 * N}`);
    applyAndFlush(store, layout, catalog, seq);
    assert.deepEqual(chunkKeys(store), [0, 1]);
  });
});

test('vectors saved one record per item are moved into chunks at start; a missing one of an item in the catalog is computed', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: ENVIRONMENT_DEFAULTS };
    const catalog = await putItems(store, N + 3);
    applyAndFlush(store, new ItemLayoutState(store, environments), catalog, 0);
    // The store as an earlier version left it: no chunks, one record per item, distinct from any
    // computed vector so their origin shows; item 2 has none.
    for (const c of chunkKeys(store)) await store.model.remove(contentVectorChunkKey('demo', c));
    const legacy = (ix: number) => Array.from(Float32Array.from({ length: VECTOR_DIM }, (_, d) => (ix + 1) / 64 + d / 1024));
    for (let ix = 0; ix < N + 3; ix++) {
      if (ix !== 2) await store.model.put(contentVectorKey('demo', ix), Buffer.from(Float32Array.from(legacy(ix)).buffer));
    }
    store.resetReadTxns();

    new ItemLayoutState(store, environments).migrateVectors();
    store.resetReadTxns();
    assert.deepEqual(chunkKeys(store), [0, 1]);
    assert.equal(store.model.getKeysCount({ start: contentVectorKey('demo', 0), end: contentVectorKey('demo', 0xffffffff) }), 0, 'the records per item are removed');
    for (const ix of [0, 1, 3, N - 1, N, N + 2]) assert.deepEqual(slot(store, ix), legacy(ix), `ix ${ix}`);
    assert.deepEqual(slot(store, 2), expectedVector('i2'));
    // Done once: a second start finds nothing to move and changes nothing.
    const before = [...store.model.getRange({})].map(({ key, value }) => [key, Buffer.from(value).toString('hex')]);
    new ItemLayoutState(store, environments).migrateVectors();
    store.resetReadTxns();
    assert.deepEqual([...store.model.getRange({})].map(({ key, value }) => [key, Buffer.from(value).toString('hex')]), before);
  });
});

test('moving vectors goes on from the records left by a start that stopped midway: chunks already written are kept', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: ENVIRONMENT_DEFAULTS };
    const catalog = await putItems(store, 2 * N + 2);
    applyAndFlush(store, new ItemLayoutState(store, environments), catalog, 0);
    // Chunk 0 moved by the stopped start (with values of its own, to tell them apart); the items
    // from N on still one record each.
    const moved = Float32Array.from({ length: N * VECTOR_DIM }, (_, i) => 1 + i / 4096);
    await store.model.put(contentVectorChunkKey('demo', 0), Buffer.from(moved.buffer));
    for (const c of chunkKeys(store)) if (c > 0) await store.model.remove(contentVectorChunkKey('demo', c));
    const legacy = (ix: number) => Array.from(Float32Array.from({ length: VECTOR_DIM }, (_, d) => (ix + 1) / 64 + d / 1024));
    for (let ix = N; ix < 2 * N + 2; ix++) await store.model.put(contentVectorKey('demo', ix), Buffer.from(Float32Array.from(legacy(ix)).buffer));
    store.resetReadTxns();

    new ItemLayoutState(store, environments).migrateVectors();
    store.resetReadTxns();
    assert.deepEqual(Buffer.from(store.model.get(contentVectorChunkKey('demo', 0))!), Buffer.from(moved.buffer), 'chunk 0 is not redone');
    for (let ix = N; ix < 2 * N + 2; ix++) assert.deepEqual(slot(store, ix), legacy(ix), `ix ${ix}`);
    assert.equal(store.model.getKeysCount({ start: contentVectorKey('demo', 0), end: contentVectorKey('demo', 0xffffffff) }), 0);
  });
});

test('making the item view records goes on from where a stopped start got, and sets the fingerprint only when done', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: ENVIRONMENT_DEFAULTS };
    await putItems(store, 3 * ITEM_VIEW_CHUNK_ITEMS + 2);
    store.resetReadTxns();
    new ItemLayoutState(store, environments).makeItemView();
    store.resetReadTxns();
    const whole = [...store.modelState.getRange({ start: itemViewChunkKey('demo', 0), end: itemViewChunkKey('demo', 0xffffffff) })].map(({ key, value }) => [key, value]);
    assert.equal(whole.length, 4);
    const fingerprint = store.modelState.get(itemViewFingerprintKey('demo'));
    assert.equal(fingerprint, itemViewFingerprint(ENVIRONMENT_DEFAULTS));

    // As a start stopped after the first chunk left it: no fingerprint, the progress, chunk 0
    // (marked, to tell a redo), nothing after.
    const first = whole[0]![1] as StoredChunk;
    const entry = [...first.e[0]!] as NonNullable<StoredChunk['e'][number]>;
    entry[0] = 'written-before-the-stop';
    const marked: StoredChunk = { s: first.s, e: [entry, ...first.e.slice(1)] };
    await store.modelState.remove(itemViewFingerprintKey('demo'));
    await store.modelState.put(itemViewChunkKey('demo', 0), marked);
    for (let c = 1; c < 4; c++) await store.modelState.remove(itemViewChunkKey('demo', c));
    await store.modelState.put(itemViewProgressKey('demo'), { fingerprint, next: ITEM_VIEW_CHUNK_ITEMS });
    store.resetReadTxns();

    new ItemLayoutState(store, environments).makeItemView();
    store.resetReadTxns();
    const after = [...store.modelState.getRange({ start: itemViewChunkKey('demo', 0), end: itemViewChunkKey('demo', 0xffffffff) })].map(({ key, value }) => [key, value]);
    assert.deepEqual(after, [[whole[0]![0], marked], ...whole.slice(1)]);
    assert.equal(store.modelState.get(itemViewFingerprintKey('demo')), fingerprint);
    assert.equal(store.modelState.get(itemViewProgressKey('demo')), undefined);
  });
});

test('the flags array is written; the type, publication and end arrays an earlier version wrote beside it are removed by the next layout write', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: ENVIRONMENT_DEFAULTS };
    const catalog = await putItems(store, 3);
    // As an earlier version left them: nothing reads these (the ranking workers read item view records).
    for (const name of ['type', 'published', 'ends'] as const) await store.model.put(itemLayoutKey('demo', name), Buffer.alloc(12));
    applyAndFlush(store, new ItemLayoutState(store, environments), catalog, 0);
    assert.deepEqual([...store.model.get(itemLayoutKey('demo', 'flags'))!.subarray(0, 3)], [ITEM_IN_CATALOG | ITEM_ENABLED, ITEM_IN_CATALOG | ITEM_ENABLED, ITEM_IN_CATALOG | ITEM_ENABLED]);
    for (const name of ['type', 'published', 'ends'] as const) assert.equal(store.model.get(itemLayoutKey('demo', name)), undefined, name);
  });
});

test('every vector of a flush is written, however many items changed since the last (the pending vectors outgrow their first memory)', async () => {
  await withModelStore(async (store) => {
    const count = 300;
    const catalog = await putItems(store, count);
    applyAndFlush(store, new ItemLayoutState(store, { demo: ENVIRONMENT_DEFAULTS }), catalog, 0);
    for (let ix = 0; ix < count; ix++) assert.deepEqual(slot(store, ix), expectedVector(`i${ix}`), `ix ${ix}`);
  });
});
