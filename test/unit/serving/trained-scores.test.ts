// A ranking worker's reader of the trained model (serving/trained-scores.ts) over real LMDB:
// after a version switch it reads the rows ahead, most consumed columns first, within the time
// it is given, and a row it read ahead is served from memory (here: after the stored rows were
// deleted, which a real version never is while it serves).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { CatalogView } from '../../../src/serving/catalog-view.ts';
import { WasmRanker } from '../../../src/ranker/kernel.ts';
import { TrainedScores } from '../../../src/serving/trained-scores.ts';
import { Catalog } from '../../../src/store/catalog.ts';
import { Store } from '../../../src/store/open.ts';
import { bytesOf, encodeNeighboursInto, neighboursWords } from '../../../src/store/model-layout.ts';
import { legacyTrainedRowKey, switchTrainedVersion, trainedItemsKey, trainedRowKey, writeTrainedVersion } from '../../../src/store/trained-model.ts';
import { tempDir } from '../../helpers/server.ts';

const ITEMS = 200;
type Rows = Parameters<typeof writeTrainedVersion>[4];

/** A version as services before the layout key wrote it: `row` rows of item ix (a data directory upgraded in place). */
function writeLegacyVersion(store: Store, env: string, version: number, items: Uint32Array, rows: Rows): void {
  store.modelRoot.transactionSync(() => {
    store.model.put(trainedItemsKey(env, version), bytesOf(items));
    for (let c = 0; c < items.length; c++) {
      const from = rows.offsets[c]!;
      const length = rows.offsets[c + 1]! - from;
      const ix = Uint32Array.from(rows.cols.subarray(from, from + length), (col) => items[col]!);
      store.model.put(legacyTrainedRowKey(env, version, items[c]!), encodeNeighboursInto(new Uint32Array(neighboursWords(length)), 0, ix, rows.weights.subarray(from), length));
    }
  });
}

/** A store holding ITEMS products p0… in 'demo', and the catalog view a ranking worker builds of it. */
async function withCatalog(body: (store: Store, view: CatalogView) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    const catalog = new Catalog(store);
    for (let i = 0; i < ITEMS; i++) await catalog.put({ environment: 'demo', item_id: `p${i}`, item_type: 'product' });
    await store.root.flushed;
    await body(store, new CatalogView(store, 'demo', ENVIRONMENT_DEFAULTS, new WasmRanker()));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const meta = (version: number) => ({ version, items: ITEMS, method: 'dlae', users: 1, interactions: 1, eventsPosition: 1, builtAt: Date.now(), buildMs: 1, memoryBytes: 1 });

test('a new version is read ahead in column order within the time given, then served from memory', () =>
  withCatalog(async (store, view) => {
    // Columns in an order unlike ix order (the most consumed first in a real build): column c is
    // item ix items[c], and its row raises the item of the next column by 1 and the one after by 0.5.
    const items = Uint32Array.from({ length: ITEMS }, (_, c) => (c * 37) % ITEMS);
    const offsets = Uint32Array.from({ length: ITEMS + 1 }, (_, c) => 2 * c);
    const cols = Uint32Array.from({ length: 2 * ITEMS }, (_, e) => ((e >> 1) + 1 + (e & 1)) % ITEMS);
    const weights = Float32Array.from({ length: 2 * ITEMS }, (_, e) => (e & 1 ? 0.5 : 1));
    writeTrainedVersion(store, 'demo', 1, items, { offsets, cols, weights } as Rows);
    switchTrainedVersion(store, 'demo', meta(1));
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
    writeTrainedVersion(store, 'demo', 2, items, { offsets, cols, weights } as Rows);
    switchTrainedVersion(store, 'demo', meta(2));
    store.resetReadTxns();
    scores.refresh();
    scores.warm(Infinity);
    await store.modelRoot.transaction(() => {
      for (let c = 0; c < ITEMS; c++) store.model.remove(trainedRowKey('demo', 2, items[c]!));
    });
    store.resetReadTxns();
    for (const c of [0, 100, ITEMS - 1]) assert.deepEqual(neighbours(c), [items[(c + 1) % ITEMS], items[(c + 2) % ITEMS]], `column ${c} served from memory`);
  }));

test('a version stored in the layout before column pairs is served the same, and a malformed row reads as empty', () =>
  withCatalog(async (store, view) => {
    // Three entries a row, negative weights and weights of every magnitude among them.
    const items = Uint32Array.from({ length: ITEMS }, (_, c) => (c * 37) % ITEMS);
    const offsets = Uint32Array.from({ length: ITEMS + 1 }, (_, c) => 3 * c);
    const cols = Uint32Array.from({ length: 3 * ITEMS }, (_, e) => (Math.floor(e / 3) + 1 + (e % 3) * 7) % ITEMS);
    const weights = Float32Array.from({ length: 3 * ITEMS }, (_, e) => [0.9, -0.6, 0.3][e % 3]! / (1 + (e % 11)));
    const answers = (scores: TrainedScores) => {
      const out: unknown[] = [];
      for (const c of [0, 1, 57, ITEMS - 1]) {
        const top = scores.forItem(items[c]!, [], 5);
        out.push(top ? [[...top.ix], [...top.weight]] : null);
      }
      const seeds = Uint32Array.of(items[3]!, items[40]!, items[41]!);
      const top = scores.forSeeds(seeds, Float32Array.of(1, 2, 0.5), 3, [items[4]!], 10);
      out.push(top ? [[...top.ix], [...top.weight]] : null);
      return out;
    };

    writeLegacyVersion(store, 'demo', 1, items, { offsets, cols, weights } as Rows);
    switchTrainedVersion(store, 'demo', meta(1));
    store.resetReadTxns();
    const scores = new TrainedScores(store, view, ENVIRONMENT_DEFAULTS.model.trained);
    scores.refresh();
    const legacy = answers(scores);
    assert.ok(legacy.every((a) => a !== null), 'the legacy version answers');

    writeTrainedVersion(store, 'demo', 2, items, { offsets, cols, weights } as Rows);
    switchTrainedVersion(store, 'demo', meta(2));
    store.resetReadTxns();
    scores.refresh();
    assert.equal(scores.version, 2);
    assert.deepEqual(answers(scores), legacy, 'column pairs give the same answers');

    // Version 3: column 0's row names a column past the model, column 1's is cut mid-pair.
    writeTrainedVersion(store, 'demo', 3, items, { offsets, cols, weights } as Rows);
    await store.modelRoot.transaction(() => {
      store.model.put(trainedRowKey('demo', 3, items[0]!), bytesOf(Uint32Array.of(1, 0x3f800000, ITEMS, 0x3f800000)));
      store.model.put(trainedRowKey('demo', 3, items[1]!), Buffer.alloc(12));
    });
    switchTrainedVersion(store, 'demo', meta(3));
    store.resetReadTxns();
    scores.refresh();
    assert.equal(scores.forItem(items[0]!, [], 5), undefined, 'a row naming a column past the model reads as empty');
    assert.equal(scores.forItem(items[1]!, [], 5), undefined, 'a row cut mid-pair reads as empty');
    assert.deepEqual(answers(scores).slice(2), legacy.slice(2), 'the other rows still answer');
  }));
