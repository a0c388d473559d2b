// A ranking worker's catalog view at start (catalog-view.ts): each item's content vector is the
// one the model builder saved for its index (read by chunk, or one record per item as an earlier
// version saved them), an item without one gets it computed from its text, and a saved vector of
// an index no longer in the catalog is not used.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView } from '../../../src/serving/catalog-view.ts';
import { contentVector } from '../../helpers/content-vector.ts';
import { WasmRanker } from '../../../src/ranker/kernel.ts';
import { VECTOR_DIM, quantizeVector, type Ranker } from '../../../src/ranker/reference-ranker.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { VECTOR_CHUNK_ITEMS, contentVectorChunkKey, contentVectorKey } from '../../../src/store/model-layout.ts';
import { Store } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

/** The vector the view handed the ranker for ix, as the ranker holds it (quantised). */
function vectorOf(ranker: Ranker, ix: number): number[] {
  const out = new Float32Array(VECTOR_DIM);
  ranker.addVector(ix, 1, out);
  return Array.from(out);
}

/** `vector` as a ranker holds it: quantised, then read back as addVector reads it. */
function asHeld(vector: ArrayLike<number>): number[] {
  const q = new Int8Array(VECTOR_DIM);
  const scale = quantizeVector(vector, 0, q, 0);
  return Array.from(q, (x) => Math.fround(Math.fround(scale) * x) + 0);
}

/** Saves each vector as the builder does (its chunk, other slots zero) or as an earlier version did (a record per ix). */
async function save(store: Store, vectors: Map<number, number[]>, legacy: boolean): Promise<void> {
  const chunks = new Map<number, Float32Array>();
  for (const [ix, vector] of vectors) {
    if (legacy) {
      await store.model.put(contentVectorKey('demo', ix), Buffer.from(Float32Array.from(vector).buffer));
      continue;
    }
    const c = Math.floor(ix / VECTOR_CHUNK_ITEMS);
    if (!chunks.has(c)) chunks.set(c, new Float32Array(VECTOR_CHUNK_ITEMS * VECTOR_DIM));
    chunks.get(c)!.set(vector, (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM);
  }
  for (const [c, chunk] of chunks) await store.model.put(contentVectorChunkKey('demo', c), Buffer.from(chunk.buffer));
}

for (const legacy of [false, true]) test(`the view starts with the vectors saved ${legacy ? 'one record per item' : 'by chunk'} of items in the catalog, computes the missing ones, and leaves out deleted items`, async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    const catalog = new Catalog(store);
    // 'unsaved' comes after a whole chunk of saved ones: the builder saves every item of a chunk it
    // writes (a newer item the engine recomputes from the change feed), so only an item with no
    // saved vector at all is computed here.
    const fillers = Array.from({ length: VECTOR_CHUNK_ITEMS - 3 }, (_, i) => `filler-${i}`);
    const items = ['kept', 'deleted', 'kept-too', ...fillers, 'unsaved'].map((id) => ({ environment: 'demo', item_id: id, item_type: 'article', title: `${id} jazz guitar festival review` }));
    for (const item of items) await catalog.put(item);
    await catalog.remove('demo', 'article', 'deleted');
    store.resetReadTxns();
    const ixOf = (id: string) => store.itemIndex.get(['demo', 'article', id]) as number;
    // What the builder saves (store/model-layout.ts): distinct from any computed vector.
    const saved = new Map<string, number[]>();
    for (const [k, id] of ['kept', 'deleted', 'kept-too', ...fillers].entries()) {
      saved.set(id, Array.from(Float32Array.from({ length: VECTOR_DIM }, (_, d) => (k + 1) / 8 + d / 1024)));
    }
    await save(store, new Map([...saved].map(([id, vector]) => [ixOf(id), vector])), legacy);
    store.resetReadTxns();

    const ranker = new WasmRanker();
    const view = new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, ranker);
    assert.deepEqual(vectorOf(ranker, ixOf('kept')), asHeld(saved.get('kept')!));
    assert.deepEqual(vectorOf(ranker, ixOf('kept-too')), asHeld(saved.get('kept-too')!));
    for (const id of fillers) assert.deepEqual(vectorOf(ranker, ixOf(id)), asHeld(saved.get(id)!));
    assert.equal(ixOf('unsaved'), VECTOR_CHUNK_ITEMS);
    const computed = contentVector(items.at(-1)!);
    assert.ok(computed, 'the unsaved item has text to compute a vector from');
    assert.deepEqual(vectorOf(ranker, ixOf('unsaved')), asHeld(computed));
    assert.deepEqual(vectorOf(ranker, ixOf('deleted')), new Array(VECTOR_DIM).fill(0));
    assert.equal(view.inCatalog(ixOf('deleted')), false);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
