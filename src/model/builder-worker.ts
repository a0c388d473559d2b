/**
 * @module model/builder-worker
 * Worker entry of the model builder. Follows the catalog change feed and each environment's
 * event log; every step applies one chunk of each in a single LMDB write transaction that also
 * stores the new positions, so a restart resumes exactly where the last commit ended: nothing
 * is counted twice or missed. Synchronous LMDB writes are fine here: this is not the main thread.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config, StoreConfig } from '../config/types.ts';
import { Catalog } from '../store/catalog.ts';
import { EventLog, type StoredEvent } from '../store/event-log.ts';
import { Store } from '../store/open.ts';
import { applyEvents, type SkipCounts } from './apply-events.ts';
import { applyCatalogChanges } from './item-layout.ts';
import { LagHistogram } from './lag-histogram.ts';

export interface BuilderWorkerData {
  store: StoreConfig;
  environments: Config['environments'];
  /** Sleep between polls when there is nothing new. */
  pollMs: number;
  /** Most events (per environment) or catalog changes applied in one transaction. */
  chunkSize: number;
  statsIntervalMs: number;
}

/** Messages the worker posts to the main thread. */
export interface BuilderStats {
  type: 'stats';
  /** Events applied since start. */
  applied: number;
  /** Acceptance-to-commit lag since start. */
  lag: ReturnType<LagHistogram['summary']>;
  /** Events (partly) skipped since start, by reason. */
  skipped: Record<string, number>;
  positions: Record<string, number>;
}

const eventsPosition = (env: string) => [env, 'pos', 'events'];
const CHANGES_POSITION = ['pos', 'changes'];

const data = workerData as BuilderWorkerData;
const store = new Store(data.store);
const catalog = new Catalog(store);
const eventLog = new EventLog(store);
const lag = new LagHistogram();
const skipped: SkipCounts = new Map();
const positions: Record<string, number> = {};
let applied = 0;
let stopping = false;

parentPort!.on('message', (message: unknown) => {
  if (message === 'stop') stopping = true;
});

/** Applies one chunk of everything pending; returns how many records it consumed. */
function step(): number {
  const acceptedAt: number[] = [];
  let consumed = 0;
  store.root.transactionSync(() => {
    const changesFrom = (store.modelState.get(CHANGES_POSITION) as number | undefined) ?? 0;
    const changes = catalog.changesSince(changesFrom, data.chunkSize);
    if (changes.length > 0) {
      applyCatalogChanges(store, data.environments, changes);
      store.modelState.put(CHANGES_POSITION, changes[changes.length - 1]!.seq);
      consumed += changes.length;
    }
    for (const [environment, config] of Object.entries(data.environments)) {
      const from = (store.modelState.get(eventsPosition(environment)) as number | undefined) ?? 0;
      const events: StoredEvent[] = [];
      let last = from;
      for (const { seq, event } of eventLog.after(environment, from, data.chunkSize)) {
        events.push(event);
        last = seq;
      }
      positions[environment] = last;
      if (events.length === 0) continue;
      applyEvents(store, environment, config, events, skipped);
      store.modelState.put(eventsPosition(environment), last);
      for (const e of events) acceptedAt.push(e.t);
      consumed += events.length;
    }
  });
  const now = Date.now();
  for (const t of acceptedAt) lag.record(now - t);
  applied += acceptedAt.length;
  return consumed;
}

function postStats(): void {
  const stats: BuilderStats = { type: 'stats', applied, lag: lag.summary(), skipped: Object.fromEntries(skipped), positions };
  parentPort!.postMessage(stats);
}

let lastStats = 0;
while (!stopping) {
  const consumed = step();
  if (Date.now() - lastStats >= data.statsIntervalMs) {
    postStats();
    lastStats = Date.now();
  }
  // Yield to the event loop either way so a 'stop' message is seen.
  await sleep(consumed > 0 ? 0 : data.pollMs);
}
postStats();
await store.close();
