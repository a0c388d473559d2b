// A standalone replay through the model builder (issue 12: 1,000,000 events in ≤ 5 s): writes
// `events` events in batches of 10 (the mix of bench/wrk/post-events.lua: page views,
// impressions, an anonymous view, add to cart, a click, a purchase or page visit, 50,000 users
// over 100,000 items with a u³ popularity skew) to a fresh data directory's event log, then
// starts the builder worker alone on it and times it until it has applied and written them all.
// CPU is the whole process's (/proc/self/stat) during the replay: the builder thread and the
// LMDB and V8 helper threads it keeps busy. The items the events name are in the catalog first,
// and the builder has laid them out before the timed replay (a service with a catalog, restarted
// with events to apply; as the events bench's rounds import them): REPLAY_CATALOG=0 leaves the
// catalog empty (the figures before the seventeenth session), where the builder gives every item
// an index as it first meets it. Used by events.bench.ts; run alone for a profile:
//   node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/builder-replay.ts 1000000
import { mulberry32 } from '../scripts/synthetic/random.ts';
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { DEFAULT_CONFIG } from '../src/config/defaults.ts';
import { ModelBuilder } from '../src/main-thread/model-builder.ts';
import { Catalog, type CatalogWrite } from '../src/store/catalog.ts';
import { EventLog } from '../src/store/event-log.ts';
import { Store } from '../src/store/open.ts';
import { tempDir } from '../test/helpers/server.ts';
import { cpuPerRequest, threadTicks } from './wrk-runner.ts';
import { setTimeout as sleep } from 'node:timers/promises';

// REPLAY_USERS / REPLAY_ITEMS: the scale (the 1,000,000-item bench data has 500,000 users).
const USERS = Number(process.env.REPLAY_USERS ?? 50_000);
const ITEMS = Number(process.env.REPLAY_ITEMS ?? 100_000);
const WITH_CATALOG = process.env.REPLAY_CATALOG !== '0';
const SECTIONS = [['news'], ['sport'], ['culture'], ['business'], ['science']];

/** Puts the ITEMS articles the events name (i0, i1, ...) through the catalog, as file drops do. */
async function loadCatalog(store: Store): Promise<void> {
  const catalog = new Catalog(store);
  for (let first = 0; first < ITEMS; first += 10_000) {
    const writes: CatalogWrite[] = [];
    for (let n = first; n < Math.min(ITEMS, first + 10_000); n++) {
      const item = { environment: 'demo', item_id: `i${n}`, item_type: 'article', title: `article ${n} about ${SECTIONS[n % 5]![0]}`, categories: [SECTIONS[n % 5]!], publication_datetime: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString() };
      writes.push({ op: 'put', item });
    }
    await catalog.applyBatch(writes);
  }
}

/** Runs the builder until it has laid out the whole catalog change feed, then stops it (untimed). */
async function layOutCatalog(storeConfig: typeof DEFAULT_CONFIG.store, lastChange: number): Promise<void> {
  const builder = new ModelBuilder({ store: storeConfig, environments: { demo: DEFAULT_CONFIG.environments.demo! }, log: pino({ level: 'warn' }) });
  while ((builder.stats?.catalogPosition ?? 0) < lastChange) await sleep(20);
  await builder.close();
}


function batchOf(next: () => number, n: number): Array<Record<string, unknown> & { event_type: string }> {
  const out = [];
  for (let k = 0; k < 10; k++) {
    const u = 1 + Math.floor(next() * USERS);
    const item = `i${Math.floor(next() ** 3 * ITEMS)}`;
    const base = { device_id: `d${u}`, user_id: `u${u}`, action_item: item, action_item_type: 'article', channel: 'www' };
    if (k < 4) out.push({ event_type: 'detail_pageview', page_type: 'article_detail', ...base });
    else if (k < 6) out.push({ event_type: 'impression', page_type: 'home', ...base, list_name: 'popular', request_id: 'r1', user_group: 'affinity' });
    else if (k === 6) out.push({ event_type: 'detail_pageview', page_type: 'article_detail', ...base, user_id: null, channel: 'www-mobile' });
    else if (k === 7) out.push({ event_type: 'add_to_cart', page_type: 'product_detail', ...base, amount: 1 });
    else if (k === 8) out.push({ event_type: 'click_on_recommendation', page_type: 'home', ...base, list_name: 'popular', request_id: 'r1', user_group: 'affinity' });
    else if (n % 2 === 0) out.push({ event_type: 'purchase', ...base, amount: 1, purchased_price: 9.5 });
    else out.push({ event_type: 'page_visit', page_type: 'home', device_id: `d${u}`, user_id: `u${u}`, channel: 'app' });
  }
  return out;
}

/** `keepDataDir`: replay into this directory and leave it (for a restart measurement after). */
export async function replayThroughBuilder(
  events: number,
  keepDataDir?: string,
): Promise<{ loadSec: number; replaySec: number; modelDoneSec: number; reportsDoneSec: number; cpuUsPerEvent: number; builderUsPerEvent: number; reportsUsPerEvent: number; threads: Record<string, number>; flushes: number; flushMaxMs: number }> {
  const dataDir = keepDataDir ?? tempDir('affinity-replay-');
  const storeConfig = { ...DEFAULT_CONFIG.store, dataDir };
  try {
    if (WITH_CATALOG) {
      // Before any event: the builder lays out the catalog alone, as a service did before them.
      const catalogStore = new Store(storeConfig);
      await loadCatalog(catalogStore);
      const lastChange = new Catalog(catalogStore).lastChangeSeq();
      await catalogStore.close();
      await layOutCatalog(storeConfig, lastChange);
    }
    const store = new Store(storeConfig);
    const log = new EventLog(store);
    const next = mulberry32(12);
    const loadStart = performance.now();
    let pending: Array<Promise<unknown>> = [];
    for (let n = 0; n < events / 10; n++) {
      const batch = batchOf(next, n);
      pending.push(log.append('demo', batch, Date.now()));
      if (pending.length === 1000) {
        await Promise.all(pending);
        pending = [];
      }
    }
    await Promise.all(pending);
    await store.close();
    const loadSec = (performance.now() - loadStart) / 1000;

    const cpuStart = threadTicks(process.pid);
    const start = performance.now();
    const builder = new ModelBuilder({ store: storeConfig, environments: { demo: DEFAULT_CONFIG.environments.demo! }, log: pino({ level: 'warn' }) });
    // REPLAY_PROGRESS=1: the builder's rate every 10 s (where a replay slows as its state grows).
    let [shownAt, shownPosition] = [start, 0];
    // Both consumers written to the end: the model and the report counters (their own thread).
    const written = () => Math.min(builder.stats?.positions.demo ?? 0, builder.reportsStats?.positions.demo ?? 0);
    // When each consumer had written the last event (which one is the replay's tail).
    let [modelDoneSec, reportsDoneSec] = [NaN, NaN];
    while (written() < events) {
      await sleep(20);
      const now = performance.now();
      if (Number.isNaN(modelDoneSec) && (builder.stats?.positions.demo ?? 0) >= events) modelDoneSec = (now - start) / 1000;
      if (Number.isNaN(reportsDoneSec) && (builder.reportsStats?.positions.demo ?? 0) >= events) reportsDoneSec = (now - start) / 1000;
      if (process.env.REPLAY_PROGRESS === '1' && now - shownAt >= 10_000) {
        const position = written();
        console.error(`replay: ${position} events written after ${((now - start) / 1000).toFixed(0)} s, ${Math.round(((position - shownPosition) * 1000) / (now - shownAt))} events/s`);
        [shownAt, shownPosition] = [now, position];
      }
    }
    const replaySec = (performance.now() - start) / 1000;
    if (Number.isNaN(modelDoneSec)) modelDoneSec = replaySec;
    if (Number.isNaN(reportsDoneSec)) reportsDoneSec = replaySec;
    const perEvent = cpuPerRequest(cpuStart, threadTicks(process.pid), events);
    const flushes = builder.stats?.flush;
    await builder.close();
    const rounded = (us = 0) => Math.round(us * 10) / 10;
    const threads = Object.fromEntries(Object.entries(perEvent).map(([name, us]) => [name, rounded(us)]));
    return {
      loadSec,
      replaySec,
      modelDoneSec,
      reportsDoneSec,
      cpuUsPerEvent: rounded(perEvent.all),
      builderUsPerEvent: rounded(perEvent['aff-builder']),
      reportsUsPerEvent: rounded(perEvent['aff-reports']),
      threads,
      flushes: flushes?.count ?? 0,
      flushMaxMs: Math.round(flushes?.maxMs ?? 0),
    };
  } finally {
    if (!keepDataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = Number(process.argv[2] ?? 1_000_000);
  console.log(JSON.stringify({ events, ...(await replayThroughBuilder(events)) }));
}
