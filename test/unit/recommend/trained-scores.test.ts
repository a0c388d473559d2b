// A ranking worker's reader of the trained model (recommend/trained-scores.ts) over real LMDB:
// after a version switch it reads the rows ahead, most consumed columns first, within the time
// it is given, and a row it read ahead is served from memory (here: after the stored rows were
// deleted, which a real version never is while it serves).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView } from '../../../src/recommend/catalog-view.ts';
import { WasmRanker } from '../../../src/recommend/kernel.ts';
import { TrainedScores } from '../../../src/recommend/trained-scores.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { Store } from '../../../src/store/open.ts';
import { switchTrainedVersion, trainedRowKey, writeTrainedVersion } from '../../../src/store/trained-model.ts';
import { tempDir } from '../../helpers/server.ts';

const ITEMS = 200;

test('a new version is read ahead in column order within the time given, then served from memory', async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    const catalog = new Catalog(store);
    for (let i = 0; i < ITEMS; i++) await catalog.put({ environment: 'demo', item_id: `p${i}`, item_type: 'product' });
    await store.root.flushed;
    const view = new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, new WasmRanker());
    // Columns in an order unlike ix order (the most consumed first in a real build): column c is
    // item ix items[c], and its row raises the item of the next column by 1 and the one after by 0.5.
    const items = Uint32Array.from({ length: ITEMS }, (_, c) => (c * 37) % ITEMS);
    const offsets = Uint32Array.from({ length: ITEMS + 1 }, (_, c) => 2 * c);
    const cols = Uint32Array.from({ length: 2 * ITEMS }, (_, e) => ((e >> 1) + 1 + (e & 1)) % ITEMS);
    const weights = Float32Array.from({ length: 2 * ITEMS }, (_, e) => (e & 1 ? 0.5 : 1));
    writeTrainedVersion(store, 'demo', 1, items, { offsets, cols, weights } as Parameters<typeof writeTrainedVersion>[4]);
    switchTrainedVersion(store, 'demo', { version: 1, items: ITEMS, method: 'dlae', users: 1, interactions: 1, eventsPosition: 1, builtAt: Date.now(), buildMs: 1, memoryBytes: 1 });
    store.resetReadTxns();

    const scores = new TrainedScores(store, view, ENVIRONMENT_DEFAULTS.model.trained);
    scores.refresh();
    assert.equal(scores.version, 1);
    scores.warm(performance.now() - 1); // no time at all: one slice of rows, the first columns'
    // Every stored row gone: only what was read ahead can still answer.
    await store.modelRoot.transaction(() => {
      for (let c = 0; c < ITEMS; c++) store.model.remove(trainedRowKey('demo', 1, items[c]!));
    });
    store.resetReadTxns();
    const neighbours = (c: number) => {
      const top = scores.forItem(items[c]!, [], 5);
      return top ? [...top.ix] : [];
    };
    assert.deepEqual(neighbours(0), [items[1], items[2]], 'the first column was read ahead');
    assert.deepEqual(neighbours(15), [items[16], items[17]], 'so was the rest of the first slice');
    assert.deepEqual(neighbours(ITEMS - 1), [], 'the last column was not: its row is read now, and gone');
    assert.deepEqual(neighbours(ITEMS - 2), [], 'nor its neighbour');

    // A new version starts over; given time, it reads every row ahead.
    writeTrainedVersion(store, 'demo', 2, items, { offsets, cols, weights } as Parameters<typeof writeTrainedVersion>[4]);
    switchTrainedVersion(store, 'demo', { version: 2, items: ITEMS, method: 'dlae', users: 1, interactions: 1, eventsPosition: 1, builtAt: Date.now(), buildMs: 1, memoryBytes: 1 });
    store.resetReadTxns();
    scores.refresh();
    scores.warm(Infinity);
    await store.modelRoot.transaction(() => {
      for (let c = 0; c < ITEMS; c++) store.model.remove(trainedRowKey('demo', 2, items[c]!));
    });
    store.resetReadTxns();
    for (const c of [0, 100, ITEMS - 1]) assert.deepEqual(neighbours(c), [items[(c + 1) % ITEMS], items[(c + 2) % ITEMS]], `column ${c} served from memory`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
