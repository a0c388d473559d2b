// A ranking worker's catalog view built from the builder's item view records (store/item-view.ts)
// holds exactly what the view built by scanning the items holds: ids, states, times, types,
// information fields, filter bitsets, similar candidates, content vectors and `latest`. The
// builder keeps the records current as the change feed goes (and makes them all for a data folder
// without them); records made for another configuration are not used, and are made again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import type { EnvironmentConfig } from '../../../src/config/types.ts';
import type { ListFilters } from '../../../src/domain/list-filters.ts';
import type { Item } from '../../../src/domain/item.ts';
import { ItemLayoutState } from '../../../src/builder/item-layout.ts';
import { CatalogView } from '../../../src/serving/catalog-view.ts';
import { WasmRanker } from '../../../src/ranker/kernel.ts';
import { VECTOR_DIM, type Ranker } from '../../../src/ranker/reference-ranker.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { ITEM_VIEW_CHUNK_ITEMS, itemViewChunkKey, itemViewFingerprintKey, type StoredChunk } from '../../../src/store/item-view.ts';
import { CHANGES_POSITION_KEY } from '../../../src/store/model-layout.ts';
import type { Store } from '../../../src/store/open.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const CONFIG: EnvironmentConfig = {
  ...ENVIRONMENT_DEFAULTS,
  itemTypes: ['article', 'video'],
  filterAttributes: ['brand'],
  lists: {
    more_like_this: { strategy: 'item_to_item', itemTypes: [], informationField: 'title' },
    latest: { strategy: 'latest', itemTypes: ['article'], informationField: 'categories' },
  },
};
const ITEMS = 3 * ITEM_VIEW_CHUNK_ITEMS + 5;
const NOW_SEC = Math.floor(Date.now() / 1000);

/** Items with every field the view keeps, varied so that no two views agree by accident. */
function itemOf(i: number): Item {
  const topics = ['jazz', 'rock', 'folk'];
  return {
    environment: 'demo',
    item_id: `item-${i}`,
    item_type: i % 4 === 3 ? 'video' : i % 9 === 8 ? 'podcast' : 'article',
    title: `${topics[i % 3]} story number ${i}`,
    ...(i % 5 !== 4 ? { categories: [['music', topics[i % 3]!, `era-${i % 4}`], ['news']] } : {}),
    ...(i % 2 === 0 ? { tags: [`t-${i % 6}`, 'weekly'] } : {}),
    ...(i % 7 === 0 ? { flags: ['premium'] } : {}),
    ...(i % 3 === 0 ? { language: i % 2 === 0 ? 'en' : 'de' } : {}),
    ...(i % 11 === 0 ? { access_type: 'paid' } : {}),
    ...(i % 4 === 1 ? { item_attributes: { brand: `b-${i % 3}`, colour: 'red' } } : {}),
    publication_datetime: new Date((NOW_SEC - 3600 * ((i * 37) % 50)) * 1000).toISOString(),
    ...(i % 13 === 12 ? { end_datetime: new Date((NOW_SEC - 60) * 1000).toISOString() } : {}),
  } as Item;
}

/** The builder's part: the change feed after `after` applied and flushed with its position. */
function builderFlush(store: Store, layout: ItemLayoutState, catalog: Catalog, after: number): number {
  store.resetReadTxns();
  const changes = catalog.changesSince(after, 100_000);
  layout.apply(changes);
  const seq = changes.at(-1)?.seq ?? after;
  const write = layout.prepareFlush();
  store.modelRoot.transactionSync(() => {
    write();
    store.modelState.put(CHANGES_POSITION_KEY, seq);
  });
  store.resetReadTxns();
  return seq;
}

async function loadCatalog(store: Store): Promise<Catalog> {
  const catalog = new Catalog(store);
  for (let i = 0; i < ITEMS; i++) await catalog.put(itemOf(i));
  await catalog.setEnabled('demo', 'article', 'item-2', false);
  await catalog.remove('demo', 'article', 'item-4');
  await catalog.put({ ...itemOf(6), title: 'a changed title', tags: ['changed'] });
  return catalog;
}

const FILTERS: ListFilters[] = [
  { categories: ['music'] },
  { categories: [['music', 'jazz']] },
  { flags: ['premium'] },
  { language: ['en', 'de'] },
  { access_type: 'paid' },
  { item_attributes: { brand: 'b-1' } },
  { categories: ['news'], language: 'en' },
];

/** Everything the view exposes, per ix and per filter, comparable with deepEqual. */
function snapshotOf(view: CatalogView, ranker: Ranker): unknown {
  const perIx = [];
  for (let ix = 0; ix < view.capacity; ix++) {
    if (!view.inCatalog(ix) && view.ids.idOf(ix) === undefined) continue;
    perIx.push({
      ix,
      id: view.ids.idOf(ix),
      inCatalog: view.inCatalog(ix),
      rankable: view.isRankable(ix, NOW_SEC),
      flags: view.flags[ix],
      published: view.published[ix],
      type: view.typeIndex(ix),
      information: [...view.information].map(([field, values]) => [field, values.get(ix)]),
      similar: [...view.similarCandidates(ix, 50, [])],
      vector: heldVector(ranker, ix),
    });
  }
  const bitsets = FILTERS.map((f) => {
    const bits = view.allowBitset([f]);
    return bits ? Array.from(bits) : null;
  });
  return { capacity: view.capacity, perIx, bitsets, latest: [...view.latest] };
}

/** The vector the ranker holds for ix. */
function heldVector(ranker: Ranker, ix: number): number[] {
  const out = new Float32Array(VECTOR_DIM);
  ranker.addVector(ix, 1, out);
  return Array.from(out);
}

/** A view of `config` on the store, and what it exposes. */
function viewOf(store: Store, config: EnvironmentConfig): { view: CatalogView; snapshot: () => unknown } {
  const ranker = new WasmRanker();
  const view = new CatalogView(store, 'demo', config, ranker);
  return { view, snapshot: () => snapshotOf(view, ranker) };
}

function itemViewRecords(store: Store): Array<[unknown, unknown]> {
  return [...store.modelState.getRange({ start: itemViewChunkKey('demo', 0), end: itemViewChunkKey('demo', 0xffffffff) })].map(({ key, value }) => [key, value]);
}

test('a view built from the item view records equals one built from the items, whether the builder kept the records or made them all', async () => {
  await withModelStore(async (store) => {
    const environments = { demo: CONFIG };
    const layout = new ItemLayoutState(store, environments);
    // A fresh folder: the records are "made" for an empty catalog, then kept as the feed goes.
    layout.makeItemView();
    store.resetReadTxns();
    const catalog = await loadCatalog(store);
    const seq = builderFlush(store, layout, catalog, 0);
    // A later item deleted and one disabled, in a second flush.
    await catalog.remove('demo', 'article', `item-${ITEMS - 1}`);
    await catalog.setEnabled('demo', 'article', 'item-0', false);
    builderFlush(store, layout, catalog, seq);
    const kept = itemViewRecords(store);
    assert.equal(kept.length, 4, 'a record per chunk of items');

    const fromRecords = viewOf(store, CONFIG).snapshot();
    // Without the fingerprint the view scans the items.
    await store.modelState.remove(itemViewFingerprintKey('demo'));
    store.resetReadTxns();
    const fromItems = viewOf(store, CONFIG).snapshot();
    assert.deepEqual(fromRecords, fromItems);

    // Made all at once from the items, the records are the ones kept.
    new ItemLayoutState(store, environments).makeItemView();
    store.resetReadTxns();
    assert.deepEqual(itemViewRecords(store), kept);
    assert.deepEqual(viewOf(store, CONFIG).snapshot(), fromItems);
  });
});

test('the view reads the records when they were made for its configuration, and scans the items when not; the builder then makes them again', async () => {
  await withModelStore(async (store) => {
    const layout = new ItemLayoutState(store, { demo: CONFIG });
    layout.makeItemView();
    builderFlush(store, layout, await loadCatalog(store), 0);
    // A record that says something else of item-1 than the item does: which one the view shows
    // tells what it read.
    const key = itemViewChunkKey('demo', 0);
    const chunk = store.modelState.get(key) as StoredChunk;
    chunk.e[1]![0] = 'from-the-record';
    await store.modelState.put(key, chunk);
    store.resetReadTxns();
    assert.equal(new CatalogView(store, 'demo', CONFIG, new WasmRanker()).ids.idOf(1), 'from-the-record');

    // Another filter attribute: the records lack its keys, so the view goes by the items.
    const other: EnvironmentConfig = { ...CONFIG, filterAttributes: ['brand', 'colour'] };
    const { view: scanned, snapshot: scannedSnapshot } = viewOf(store, other);
    assert.equal(scanned.ids.idOf(1), 'item-1');
    const colourRed = scanned.allowBitset([{ item_attributes: { colour: 'red' } }])!;
    assert.equal((colourRed[0]! >>> 1) & 1, 1, 'item-1 has colour red');

    // The builder started with that configuration makes the records again, and they are used.
    new ItemLayoutState(store, { demo: other }).makeItemView();
    store.resetReadTxns();
    const remade = viewOf(store, other);
    assert.equal(remade.view.ids.idOf(1), 'item-1');
    assert.deepEqual(remade.snapshot(), scannedSnapshot());
  });
});

test('a malformed record, or item in a record, is skipped, not thrown on', async () => {
  await withModelStore(async (store) => {
    const layout = new ItemLayoutState(store, { demo: CONFIG });
    layout.makeItemView();
    builderFlush(store, layout, await loadCatalog(store), 0);
    await store.modelState.put(itemViewChunkKey('demo', 1), { s: 'not a list' });
    // In chunk 2, item one a number instead of a tuple and item two a tuple cut short.
    const chunk2 = store.modelState.get(itemViewChunkKey('demo', 2)) as StoredChunk;
    await store.modelState.put(itemViewChunkKey('demo', 2), { s: chunk2.s, e: [7, ['cut-short', 0], ...chunk2.e.slice(2)] });
    store.resetReadTxns();
    const view = new CatalogView(store, 'demo', CONFIG, new WasmRanker());
    assert.equal(view.ids.idOf(0), 'item-0');
    assert.equal(view.inCatalog(ITEM_VIEW_CHUNK_ITEMS), false);
    assert.equal(view.inCatalog(2 * ITEM_VIEW_CHUNK_ITEMS), false);
    assert.equal(view.inCatalog(2 * ITEM_VIEW_CHUNK_ITEMS + 1), false);
    assert.equal(view.ids.idOf(2 * ITEM_VIEW_CHUNK_ITEMS + 2), `item-${2 * ITEM_VIEW_CHUNK_ITEMS + 2}`);
  });
});
