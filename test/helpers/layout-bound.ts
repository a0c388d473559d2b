// Puts `items` items into a fresh data directory's catalog, then runs the model builder (the real
// worker, through ModelBuilder) with an item-layout pace of ten minutes and a bound of `bound`
// pending items, and prints (JSON) the catalog change position its layout writes covered
// `waitMs` after it started: the bound, not the pace, is what can write them that soon.
// A process of its own for the reason given in build-model.ts. Usage:
//   node --import tsx test/helpers/layout-bound.ts <dataDir> <items> <bound> <waitMs>
import { setTimeout as sleep } from 'node:timers/promises';
import { open } from 'lmdb';
import { pino } from 'pino';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { ModelBuilder } from '../../src/main-thread/model-builder.ts';
import { Catalog } from '../../src/store/catalog.ts';
import { CHANGES_POSITION_KEY } from '../../src/store/model-layout.ts';
import { modelStorePath, Store } from '../../src/store/open.ts';

const [dataDir = '', items = '0', bound = '0', waitMs = '0'] = process.argv.slice(2);
const storeConfig = { ...DEFAULT_CONFIG.store, dataDir };
const store = new Store(storeConfig);
await new Catalog(store).applyBatch(
  Array.from({ length: Number(items) }, (_, i) => ({ op: 'put' as const, item: { environment: 'demo', item_type: 'article', item_id: `a${i}`, title: `Article ${i}` } })),
);
await store.close();

const builder = new ModelBuilder({
  store: storeConfig,
  environments: { demo: DEFAULT_CONFIG.environments.demo! },
  log: pino({ level: 'error' }),
  pacing: { layoutFlushMs: 600_000, layoutFlushItems: Number(bound) },
});
await sleep(Number(waitMs));
const model = open({ path: modelStorePath(dataDir), maxDbs: 4, readOnly: true });
const position = (model.openDB({ name: 'model-state', encoding: 'msgpack' }).get(CHANGES_POSITION_KEY) as number | undefined) ?? 0;
await model.close();
await builder.close();
console.log(JSON.stringify(position));
