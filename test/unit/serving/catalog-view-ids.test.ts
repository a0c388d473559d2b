// The catalog view's own index of item ids (catalog-view.ts ixOf), which the engine asks before
// LMDB's item index: for every item it holds it answers what LMDB's index answers, through its
// growth, for the same id under two types, after a removal, and in a view built at a worker's
// start; for what it does not hold (an unknown id, a type not configured, an item removed before
// the view saw it) it answers nothing, and the engine then asks LMDB.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView } from '../../../src/serving/catalog-view.ts';
import { WasmRanker } from '../../../src/ranker/kernel.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const CONFIG = { ...ENVIRONMENT_DEFAULTS, itemTypes: ['article', 'video'] };
const ITEMS = 3000;

test("the view's id index answers as LMDB's item index for every item it holds, and nothing for what it does not", async () => {
  await withModelStore(async (store) => {
    const catalog = new Catalog(store);
    const view = new CatalogView(store, 'demo', CONFIG, new WasmRanker());
    const items: Array<[type: string, id: string]> = [];
    // Past the table's first sizes (1,024 slots, at most half full): it grows twice on the way.
    for (let i = 0; i < ITEMS; i++) {
      const type = i % 3 === 0 ? 'video' : 'article';
      // Every tenth article's id is also a video's: the type tells them apart.
      const id = i % 10 === 1 ? `shared-${i}` : `${type}-${i}`;
      items.push([type, id]);
      if (i % 10 === 1) items.push(['video', id]);
    }
    for (const [type, id] of items) await catalog.put({ environment: 'demo', item_type: type, item_id: id });
    store.resetReadTxns();
    for (const change of catalog.changesSince(0, 100_000)) view.apply(change);
    // Removed after the view held it: it keeps its ix (as in LMDB's index), out of the catalog.
    const seen = catalog.lastChangeSeq();
    await catalog.remove('demo', items[5]![0], items[5]![1]);
    store.resetReadTxns();
    for (const change of catalog.changesSince(seen, 100)) view.apply(change);

    const lmdbIx = (type: string, id: string) => store.itemIndex.get(['demo', type, id]) as number | undefined;
    for (const [type, id] of items) {
      const ix = lmdbIx(type, id);
      assert.ok(ix !== undefined);
      assert.equal(view.ixOf(type, id), ix, `${type} ${id}`);
    }
    assert.notEqual(view.ixOf('article', 'shared-1'), view.ixOf('video', 'shared-1'));
    assert.equal(view.inCatalog(view.ixOf(items[5]![0], items[5]![1])!), false, 'the removed item is out of the catalog');
    assert.equal(view.ixOf('article', 'never-put'), undefined);
    assert.equal(view.ixOf('article', 'video-0'), undefined, 'an id of the other type only');
    assert.equal(view.ixOf('podcast', 'article-1'), undefined, 'a type not configured');

    // A worker's start: the view built over the stored catalog answers the same for what it
    // holds; the item removed before is not in the stored catalog, so the engine asks LMDB.
    const started = new CatalogView(store, 'demo', CONFIG, new WasmRanker());
    for (const [type, id] of items.filter((_, k) => k !== 5)) assert.equal(started.ixOf(type, id), lmdbIx(type, id), `${type} ${id} at start`);
    assert.equal(started.ixOf(items[5]![0], items[5]![1]), undefined);
  });
});
