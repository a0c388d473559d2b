/**
 * @module eval/harness
 * One offline evaluation run through Affinity's own code path: a fresh data directory; the
 * catalog written through store/catalog.ts; the training interactions appended to the event log
 * with their own timestamps (store/event-log.ts, trusted import); the real model builder worker
 * run until it has written every event; the trained model built by the real trainer worker; and
 * each test user's top-k list computed by the same Engine the ranking workers run (`personalized`
 * strategy, training items excluded as a client would through `exclude`). Then eval/metrics.ts.
 * Offline tooling: it runs workers and LMDB writes freely; nothing here is on a serving path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { ENVIRONMENT_DEFAULTS } from '../config/defaults.ts';
import type { Config, EnvironmentConfig } from '../config/types.ts';
import type { TrackedEvent } from '../domain/event.ts';
import { ModelBuilder } from '../main-thread/model-builder.ts';
import { ModelTrainer } from '../main-thread/model-trainer.ts';
import { Engine } from '../serving/engine.ts';
import { splitIds } from '../serving/list-json.ts';
import type { RankTask } from '../serving/task.ts';
import { Catalog } from '../store/catalog.ts';
import { EventLog } from '../store/event-log.ts';
import { Store } from '../store/open.ts';
import type { Dataset } from './datasets.ts';
import { type RankingMetrics, rankingMetrics } from './metrics.ts';
import type { Interaction, Split } from './split.ts';

export const EVAL_ENVIRONMENT = 'eval';
const ITEM_TYPE = 'item';
/** Appends in flight at once: lmdb-js batches concurrent transactions into shared commits. */
const APPENDS_IN_FLIGHT = 2000;

export interface RunResult {
  metrics: RankingMetrics;
  /** User → their top k, and user → their test items (users with a training history only). */
  predictions: Map<string, string[]>;
  relevant: Map<string, Set<string>>;
  /** Wall-clock ms of each phase. */
  ms: { load: number; modelBuilder: number; training: number; recommend: number };
  model: { status: string; items: number; buildMs: number; memoryBytes: number; peakRssBytes: number; error?: string };
}

function deepMerge(base: unknown, over: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/**
 * The environment evaluated: the service's defaults (so the eval measures what ships, history
 * length and model settings included), one list of the `personalized` strategy, no scheduled
 * rebuilds (the harness builds once, after loading); then `overrides`.
 */
export function evalEnvironment(overrides: Record<string, unknown> = {}): EnvironmentConfig {
  const base: EnvironmentConfig = {
    ...structuredClone(ENVIRONMENT_DEFAULTS),
    itemTypes: [ITEM_TYPE],
    lists: { recommended: { strategy: 'personalized', itemTypes: [], fallback: 'popular' } },
  };
  base.model.trained.rebuildIntervalSec = 0;
  return deepMerge(base, overrides) as EnvironmentConfig;
}

function eventOf(dataset: Dataset, r: Interaction): TrackedEvent {
  const event: TrackedEvent = {
    event_type: dataset.eventType,
    user_id: r.user,
    device_id: `d-${r.user}`,
    channel: 'test',
    page_type: 'detail',
    action_item: r.item,
    action_item_type: ITEM_TYPE,
    ...(dataset.eventType === 'purchase' ? { amount: 1, purchased_price: 0 } : { interaction_type: 'rating' }),
  };
  if (r.weight !== undefined) event.weight = r.weight;
  return event;
}

/** Appends interactions oldest first, one batch per distinct second, stamped with that second. */
async function appendEvents(store: Store, dataset: Dataset, rows: readonly Interaction[]): Promise<number> {
  const log = new EventLog(store);
  const sorted = rows.map((r, i) => [r, i] as const).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]);
  const inFlight: Array<Promise<unknown>> = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end < sorted.length && sorted[end]![0].t === sorted[start]![0].t) end++;
    const events = sorted.slice(start, end).map(([r]) => eventOf(dataset, r));
    inFlight.push(log.append(EVAL_ENVIRONMENT, events, sorted[start]![0].t * 1000));
    if (inFlight.length >= APPENDS_IN_FLIGHT) await Promise.all(inFlight.splice(0));
    start = end;
  }
  await Promise.all(inFlight);
  return store.meta.get('eventSeq') ?? 0;
}

async function waitForBuilder(builder: ModelBuilder, lastSeq: number): Promise<void> {
  for (;;) {
    if ((builder.stats?.positions[EVAL_ENVIRONMENT] ?? 0) >= lastSeq) return;
    await sleep(50);
  }
}

/** Evaluates one split: returns the metrics at `k` and what each phase cost. */
export async function evaluateSplit(dataset: Dataset, split: Split, environment: EnvironmentConfig, k: number): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'affinity-eval-'));
  const storeConfig = { dataDir, mapSizeBytes: 4 * 1024 ** 3 };
  const environments: Config['environments'] = { [EVAL_ENVIRONMENT]: environment };
  const log = pino({ level: 'warn' }, pino.destination(2));
  const store = new Store(storeConfig);
  try {
    const t0 = performance.now();
    const catalog = new Catalog(store);
    await Promise.all(
      dataset.items.map((it) =>
        catalog.put({
          environment: EVAL_ENVIRONMENT,
          item_id: it.id,
          item_type: ITEM_TYPE,
          ...(it.title ? { title: it.title } : {}),
          ...(it.categories && it.categories.length > 0 ? { categories: it.categories } : {}),
          ...(it.published ? { publication_datetime: it.published } : {}),
        }),
      ),
    );
    const lastSeq = await appendEvents(store, dataset, split.train);
    const t1 = performance.now();

    const builder = new ModelBuilder({ store: storeConfig, environments, log });
    await waitForBuilder(builder, lastSeq);
    await builder.close();
    const t2 = performance.now();

    const trainer = new ModelTrainer({ store: storeConfig, environments, log, servingModel: () => undefined });
    const outcome = await trainer.rebuild(EVAL_ENVIRONMENT);
    const stats = trainer.stats.get(EVAL_ENVIRONMENT)?.last;
    await trainer.close();
    const t3 = performance.now();

    store.resetReadTxns();
    const engine = new Engine(store, environments);
    // "Now" is just after the data ends, so time decay sees the ages the data had then.
    let nowSec = 0;
    for (const r of split.train) if (r.t >= nowSec) nowSec = r.t + 1;
    for (const r of split.test) if (r.t >= nowSec) nowSec = r.t + 1;
    const consumed = new Map<string, string[]>();
    for (const r of split.train) {
      const items = consumed.get(r.user);
      if (items) items.push(r.item);
      else consumed.set(r.user, [r.item]);
    }
    const relevant = new Map<string, Set<string>>();
    for (const r of split.test) {
      const items = relevant.get(r.user);
      if (items) items.add(r.item);
      else relevant.set(r.user, new Set([r.item]));
    }
    const predictions = new Map<string, string[]>();
    for (const user of relevant.keys()) {
      const exclude = consumed.get(user);
      if (!exclude) continue; // no training history: no prediction (the protocol's common users)
      const task: RankTask = {
        environment: EVAL_ENVIRONMENT,
        nowSec,
        userId: user,
        deviceId: `d-${user}`,
        history: [],
        exclude,
        lists: [{ strategy: 'personalized', fallback: 'popular', size: k, limit: k, itemTypes: [], filters: [], content: [] }],
      };
      const outcome = engine.recommend(task);
      if ('errors' in outcome) throw new Error(`engine refused user ${user}: ${JSON.stringify(outcome.errors)}`);
      const list = outcome.lists[0]!;
      predictions.set(user, splitIds(list.ids, list.ix.length));
    }
    const t4 = performance.now();
    return {
      metrics: rankingMetrics(relevant, predictions, k),
      predictions,
      relevant,
      ms: { load: t1 - t0, modelBuilder: t2 - t1, training: t3 - t2, recommend: t4 - t3 },
      model:
        outcome.status === 'built'
          ? { status: 'built', items: outcome.meta.items, buildMs: outcome.meta.buildMs, memoryBytes: outcome.meta.memoryBytes, peakRssBytes: stats?.peakRssBytes ?? 0 }
          : { status: outcome.status, items: 0, buildMs: 0, memoryBytes: 0, peakRssBytes: 0, error: 'error' in outcome ? outcome.error : outcome.reason },
    };
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
