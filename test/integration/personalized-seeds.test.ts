// How a personalized list weighs its user's history (issue 13), on a real LMDB store in a fresh
// folder and the real Engine, without a server: co-occurrence rows and trained-model rows are
// written in the store's own layouts (src/store/model-layout.ts, src/store/trained-model.ts), the
// history comes with the request, and only the seed arithmetic decides the order (no popularity,
// no content vectors). Co-occurrence seeds decay by their age before the user's newest seed, not
// before the request; short histories weigh their items' trained rows alike
// (model.trained.shortHistoryItems), long ones sum them as learned.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../src/config/defaults.ts';
import type { EnvironmentConfig } from '../../src/config/types.ts';
import { Engine } from '../../src/serving/engine.ts';
import { splitIds } from '../../src/serving/list-json.ts';
import type { RankTask } from '../../src/serving/task.ts';
import { Catalog } from '../../src/store/catalog.ts';
import { encodeNeighboursInto, neighboursKey, neighboursWords } from '../../src/store/model-layout.ts';
import { Store } from '../../src/store/open.ts';
import { switchTrainedVersion, writeTrainedVersion } from '../../src/store/trained-model.ts';
import { tempDir } from '../helpers/server.ts';

const DAY = 86_400;
const T0 = 1_700_000_000;
/** Items not in the trained model, to make a history long. */
const FILLERS = 40;
const ITEMS = ['a', 'b', 'n1', 'n2', 't', 'p', 'r', 'x', 'y', 'z', ...Array.from({ length: FILLERS }, (_, i) => `f${i}`)];

function environment(trained: Partial<EnvironmentConfig['model']['trained']>): EnvironmentConfig {
  const base = structuredClone(ENVIRONMENT_DEFAULTS);
  return {
    ...base,
    itemTypes: ['article'],
    lists: { mine: { strategy: 'personalized', itemTypes: [], fallback: 'popular' } },
    model: { ...base.model, trained: { ...base.model.trained, rebuildIntervalSec: 0, ...trained } },
  };
}

describe('personalized lists: how the history is weighed', () => {
  let dataDir: string;
  let store: Store;
  const ix = new Map<string, number>();

  before(async () => {
    dataDir = tempDir('affinity-seeds-');
    store = new Store({ dataDir, mapSizeBytes: 64 * 1024 ** 2 });
    const catalog = new Catalog(store);
    for (const id of ITEMS) await catalog.put({ environment: 'cooc', item_id: id, item_type: 'article' });
    for (const id of ITEMS) await catalog.put({ environment: 'trained', item_id: id, item_type: 'article' });
    for (const id of ITEMS) ix.set(id, store.itemIndex.get(['trained', 'article', id])!);
    const ixOf = (env: string, id: string) => store.itemIndex.get([env, 'article', id])!;
    // Co-occurrence: a's neighbour n1, b's neighbour n2 (a row's strongest counts 1 × the seed's weight).
    const row = (env: string, seed: string, neighbour: string, weight: number) =>
      store.model.put(neighboursKey(env, ixOf(env, seed)), encodeNeighboursInto(new Uint32Array(neighboursWords(1)), 0, Uint32Array.of(ixOf(env, neighbour)), Float32Array.of(weight), 1));
    await row('cooc', 'a', 'n1', 150);
    await row('cooc', 'b', 'n2', 150);
    // Beside them the trained model's a → t 1, n1 0.995, which the kernel weighs 100
    // (model.trained.weight): n1 scores 99.5 + a's seed weight (1, decayed), t 100.
    const coocItems = Uint32Array.from(['a', 't', 'n1'], (id) => ixOf('cooc', id));
    writeTrainedVersion(store, 'cooc', 1, coocItems, { offsets: Uint32Array.of(0, 2, 2, 2), cols: Uint32Array.of(1, 2), weights: Float32Array.of(1, 0.995) });
    switchTrainedVersion(store, 'cooc', { version: 1, items: 3, method: 'dlae', users: 0, interactions: 0, eventsPosition: 0, builtAt: 0, buildMs: 0, memoryBytes: 0 });
    // Trained rows, largest |w| first: p (a common item, large weights) → x 1, z 0.5; r (a rare
    // one, small weights) → z 0.36, y 0.2.
    const columns = ['p', 'r', 'x', 'y', 'z'];
    const items = Uint32Array.from(columns, (id) => ix.get(id)!);
    const c = (id: string) => columns.indexOf(id);
    writeTrainedVersion(store, 'trained', 1, items, {
      offsets: Uint32Array.of(0, 2, 4, 4, 4, 4),
      cols: Uint32Array.of(c('x'), c('z'), c('z'), c('y')),
      weights: Float32Array.of(1, 0.5, 0.36, 0.2),
    });
    switchTrainedVersion(store, 'trained', { version: 1, items: 5, method: 'dlae', users: 0, interactions: 0, eventsPosition: 0, builtAt: 0, buildMs: 0, memoryBytes: 0 });
    store.root.resetReadTxn();
  });
  after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function list(env: string, config: EnvironmentConfig, history: Array<[id: string, timestamp: number]>, nowSec: number, size = 3): string[] {
    const engine = new Engine(store, { [env]: config });
    const task: RankTask = {
      environment: env,
      nowSec,
      deviceId: 'no-consent',
      history: history.map(([id, timestamp]) => ({ id, type: 'article', reconsumable: false, timestamp })),
      exclude: [],
      lists: [{ strategy: 'personalized', fallback: 'popular', size, limit: size, itemTypes: [], filters: [], content: [] }],
    };
    const outcome = engine.recommend(task);
    if ('errors' in outcome) assert.fail(JSON.stringify(outcome.errors));
    const ranked = outcome.lists[0]!;
    return splitIds(ranked.ids, ranked.ix.length);
  }

  test('a history last seen 60 days ago keeps its co-occurrence neighbour ahead in the trained model\'s near-tie, as the same hour', () => {
    // Decayed from the request, n1 would score 99.5 + 2^(−60/14) ≈ 99.55 against t's 100.
    const config = environment({});
    const history: Array<[string, number]> = [['a', T0]];
    assert.deepEqual(list('cooc', config, history, T0 + 3600, 2), ['n1', 't']);
    assert.deepEqual(list('cooc', config, history, T0 + 60 * DAY, 2), ['n1', 't']);
  });

  test('an older seed still counts less than the newest: b, two half-lives older than a, gives n2 1/4 against n1 1', () => {
    assert.deepEqual(list('cooc', environment({ enabled: false }), [['b', T0 - 28 * DAY], ['a', T0]], T0 + 60 * DAY, 2), ['n1', 'n2']);
  });

  test('a two-item history weighs a rare item\'s small row like a common one\'s: z, in both rows, ranks first', () => {
    // shortHistoryItems 2, n 2: rows divided by largest^(1/2): x 1, z 0.5 + 0.36/0.6 = 1.1, y 0.33.
    assert.deepEqual(list('trained', environment({ shortHistoryItems: 2 }), [['p', T0], ['r', T0]], T0 + 60), ['z', 'x', 'y']);
  });

  test('with shortHistoryItems 0 the rows sum as learned: x (1) before z (0.86)', () => {
    assert.deepEqual(list('trained', environment({ shortHistoryItems: 0 }), [['p', T0], ['r', T0]], T0 + 60), ['x', 'z', 'y']);
  });

  test('a long history sums the rows nearly as learned: x first again', () => {
    // n = 42 distinct items (40 outside the model): r's row is divided by 0.36^(2/44) only.
    const history: Array<[string, number]> = [['p', T0], ['r', T0], ...Array.from({ length: FILLERS }, (_, i): [string, number] => [`f${i}`, T0 - DAY])];
    assert.deepEqual(list('trained', environment({ shortHistoryItems: 2 }), history, T0 + 60), ['x', 'z', 'y']);
  });
});
