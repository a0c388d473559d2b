// A ranking worker's catalog view at start (catalog-view.ts): each item's content vector is the
// one the model builder saved for its index (read in one scan), an item without one gets it
// computed from its text, and a saved vector of an index no longer in the catalog is not used.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView } from '../../../src/recommend/catalog-view.ts';
import { contentVector } from '../../../src/recommend/content-vector.ts';
import { WasmRanker } from '../../../src/recommend/kernel.ts';
import { VECTOR_DIM } from '../../../src/recommend/reference-ranker.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { contentVectorKey } from '../../../src/store/model.ts';
import { Store } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

const vectorOf = (view: CatalogView, ix: number) => Array.from(view.vectors.subarray(ix * VECTOR_DIM, (ix + 1) * VECTOR_DIM));

test('the view starts with the saved vectors of items in the catalog, computes the missing ones, and leaves out deleted items', async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    const catalog = new Catalog(store);
    const items = ['kept', 'deleted', 'unsaved', 'kept-too'].map((id) => ({ environment: 'demo', item_id: id, item_type: 'article', title: `${id} jazz guitar festival review` }));
    for (const item of items) await catalog.put(item);
    await catalog.remove('demo', 'article', 'deleted');
    store.resetReadTxns();
    const ixOf = (id: string) => store.itemIndex.get(['demo', 'article', id]) as number;
    // What the builder saves (store/model.ts contentVectorKey): distinct from any computed vector.
    const saved = new Map<string, number[]>();
    for (const [k, id] of ['kept', 'deleted', 'kept-too'].entries()) {
      const vector = Array.from({ length: VECTOR_DIM }, (_, d) => (k + 1) / 8 + d / 1024);
      saved.set(id, Array.from(Float32Array.from(vector)));
      await store.model.put(contentVectorKey('demo', ixOf(id)), Buffer.from(Float32Array.from(vector).buffer));
    }
    store.resetReadTxns();

    const view = new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, new WasmRanker());
    assert.deepEqual(vectorOf(view, ixOf('kept')), saved.get('kept'));
    assert.deepEqual(vectorOf(view, ixOf('kept-too')), saved.get('kept-too'));
    const computed = contentVector(items[2]!);
    assert.ok(computed, 'the unsaved item has text to compute a vector from');
    assert.deepEqual(vectorOf(view, ixOf('unsaved')), Array.from(computed));
    assert.deepEqual(vectorOf(view, ixOf('deleted')), new Array(VECTOR_DIM).fill(0));
    assert.equal(view.inCatalog(ixOf('deleted')), false);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
