// The `latest` list kept live from the change feed (catalog-view.ts #insertLatest): past its
// LATEST_SIZE bound, with items re-published newer and older, it stays the catalog's newest
// items in order, each once.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView, LATEST_SIZE, newestFirst } from '../../../src/serving/catalog-view.ts';
import { ITEM_IN_CATALOG } from '../../../src/store/model-layout.ts';
import { WasmRanker } from '../../../src/ranker/kernel.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { Store } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

const START_SEC = 1_700_000_000;

test('latest stays the newest items in order, each once, as items arrive and are re-published past its bound', async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 256 * 1024 ** 2 });
  try {
    const catalog = new Catalog(store);
    const view = new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, new WasmRanker());
    const publishedSec = new Map<string, number>();
    let seq = 0;
    // A seeded spread of publication times with ties, so order needs the ix tiebreak too.
    let state = 7;
    const nextSec = () => START_SEC + ((state = (state * 48271) % 2147483647) % 20_000);
    const put = async (id: string, sec: number) => {
      publishedSec.set(id, sec);
      const op = catalog.put({ environment: 'demo', item_id: id, item_type: 'article', publication_datetime: new Date(sec * 1000).toISOString() });
      await op;
      store.resetReadTxns();
      const ix = store.itemIndex.get(['demo', 'article', id]) as number;
      view.apply({ seq: ++seq, environment: 'demo', itemType: 'article', itemId: id, ix, op: await op, at: Date.now() });
    };
    for (let i = 0; i < LATEST_SIZE + 300; i++) await put(`a${i}`, nextSec());
    // Re-published: old ones made newest (they enter, pushing the oldest out), the newest moved
    // down within the list, and one re-put unchanged. (Not: one made older than the list's end.
    // It leaves room that the items cut before cannot fill, as the list keeps no more than its
    // bound, so it comes back at the end: a known approximation at the list's tail.)
    const oldestFirst = [...publishedSec].sort((a, b) => a[1] - b[1]);
    // Cut from the list before, now the newest of all.
    for (const [id] of oldestFirst.slice(0, 3)) await put(id, START_SEC + 40_000);
    // Cut before and re-put still too old for the list: it stays out, and the list as it was.
    const before = [...view.latest];
    await put(oldestFirst[3]![0], oldestFirst[3]![1]);
    assert.deepEqual(view.latest, before);
    for (let i = 0; i < 40; i++) await put(`a${i * 97}`, START_SEC + 30_000 + i);
    const byRank = [...publishedSec].map(([id, sec]) => ({ id, sec, ix: store.itemIndex.get(['demo', 'article', id]) as number }));
    byRank.sort((a, b) => b.sec - a.sec || a.ix - b.ix);
    for (const { id } of byRank.slice(0, 25)) await put(id, byRank[3000]!.sec);
    await put(byRank[100]!.id, publishedSec.get(byRank[30]!.id)!);
    await put(byRank[200]!.id, publishedSec.get(byRank[200]!.id)!);

    const expected = [...publishedSec]
      .map(([id, sec]) => ({ sec, ix: store.itemIndex.get(['demo', 'article', id]) as number }))
      .sort((a, b) => b.sec - a.sec || a.ix - b.ix)
      .slice(0, LATEST_SIZE)
      .map((e) => e.ix);
    assert.equal(view.latest.length, LATEST_SIZE);
    assert.equal(new Set(view.latest).size, LATEST_SIZE, 'each item once');
    assert.deepEqual(view.latest, expected);
    // A view built over the stored catalog (a worker's start) finds the same list.
    assert.deepEqual(new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, new WasmRanker()).latest, expected);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('newestFirst gives what sorting every catalog ix by time then ix gives, with ties at the cut and items outside the catalog', () => {
  let state = 11;
  const next = (n: number) => (state = (state * 48271) % 2147483647) % n;
  for (const [capacity, max, spread] of [[0, 5, 10], [10, 20, 3], [1000, 50, 7], [5000, 300, 40], [5000, 300, 5000], [3000, 3000, 2], [4000, 1, 1]] as const) {
    const published = new Uint32Array(capacity);
    const flags = new Uint8Array(capacity);
    for (let ix = 0; ix < capacity; ix++) {
      // Few distinct times (many ties), some never published (0), a fifth not in the catalog.
      published[ix] = next(4) === 0 ? 0 : START_SEC + next(spread);
      flags[ix] = next(5) === 0 ? 0 : ITEM_IN_CATALOG;
    }
    const expected = [...Array(capacity).keys()]
      .filter((ix) => flags[ix]! & ITEM_IN_CATALOG)
      .sort((a, b) => published[b]! - published[a]! || a - b)
      .slice(0, max);
    assert.deepEqual(newestFirst(published, flags, capacity, max), expected, `capacity ${capacity}, max ${max}, spread ${spread}`);
  }
});
