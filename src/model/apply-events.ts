/**
 * @module model/apply-events
 * Turns one chunk of an environment's logged events into model updates: histories, item-item
 * co-occurrence, popularity and report counters. Runs inside the builder's write transaction;
 * what it cannot use it skips and counts by reason.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import type { StoredEvent } from '../store/event-log.ts';
import { ensureItemIndex } from '../store/item-index.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { CooccurrenceUpdates } from './cooccurrence.ts';
import { HistoryUpdates } from './histories.ts';
import { PopularityUpdates } from './popularity.ts';
import { ReportUpdates } from './reports.ts';

export type SkipCounts = Map<string, number>;

function skip(skipped: SkipCounts, reason: string): void {
  skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

export function applyEvents(
  store: Store,
  environment: string,
  config: EnvironmentConfig,
  events: readonly StoredEvent[],
  skipped: SkipCounts,
): void {
  const model = config.model;
  const histories = new HistoryUpdates(store, environment, model.historyLength);
  const cooccurrence = new CooccurrenceUpdates(store, environment, model.maxNeighbours);
  const popularity = new PopularityUpdates(store, environment);
  const reports = new ReportUpdates(store, environment, model.attributionWindowSec);
  const recent: number[] = [];
  const recentIx: number[] = [];

  for (const { t, e } of events) {
    reports.add(e, t);
    const userId = str(e.user_id);
    const deviceId = str(e.device_id);
    if (userId && deviceId && deviceId !== 'no-consent') histories.link(deviceId, userId);

    const typeCode = EVENT_TYPE_CODES[e.event_type];
    if (typeCode === undefined) continue;
    const itemId = str(e.action_item);
    const itemType = str(e.action_item_type);
    if (!itemId || !itemType) {
      skip(skipped, `${e.event_type} without action_item`);
      continue;
    }
    if (!config.itemTypes.includes(itemType)) {
      skip(skipped, `action_item_type '${itemType}' is not an item type`);
      continue;
    }
    const ix = ensureItemIndex(store, environment, itemType, itemId);
    const unixSec = Math.floor(t / 1000);
    const weight = model.eventWeights[e.event_type] ?? 0;
    const key = histories.keyFor(userId, deviceId);
    if (!key) {
      // Anonymous (no-consent) consumption still says what is popular.
      popularity.add(ix, unixSec, weight);
      continue;
    }
    if (weight > 0) {
      histories.recentItems(key, model.cooccurrenceWindow + 1, recent);
      recentIx.length = 0;
      for (const j of recent) if (j !== ix && recentIx.length < model.cooccurrenceWindow) recentIx.push(j);
      for (const j of recentIx) cooccurrence.addPair(ix, j, weight);
      popularity.add(ix, unixSec, weight);
    }
    histories.append(key, ix, typeCode, unixSec);
  }

  histories.flush();
  cooccurrence.flush();
  popularity.flush();
  reports.flush();
}
