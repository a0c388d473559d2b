/**
 * @module model/training-data
 * Reads one environment's event log into the trained model's input: per user, the items they
 * consumed with a value (their strongest event's weight, model/event-weight.ts, decayed by age
 * when model.trained.halfLifeSec is set), over every item consumed by at least two users (one
 * user says nothing about what goes together), most consumed first. Values are scaled so their
 * mean is 1, which keeps λ meaningful whatever the event weights. Reads LMDB only (never
 * writes). A user is their user_id, else their device_id; a device seen with a user_id is that
 * user's, before and after the event that linked them, as in the model builder's histories.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import { EventLog } from '../store/event-log.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { eventWeight } from './event-weight.ts';
import type { InteractionRows } from './linear-autoencoder.ts';

export interface TrainingData {
  /** Item ix of each model column, most consumed first. */
  items: Uint32Array;
  rows: InteractionRows;
  users: number;
  /** Event sequence number read up to (inclusive). */
  eventsPosition: number;
}

/** Users an item needs to become a model column. */
const MIN_USERS = 2;

const str = (v: unknown) => (typeof v === 'string' && v !== '' && v !== 'no-consent' ? v : undefined);

/** The training input from every event logged for `environment` so far. */
export function readTrainingData(store: Store, environment: string, config: EnvironmentConfig): TrainingData {
  const { eventWeights, trained } = config.model;
  const itemIx = new Map<string, number>();
  const byUser = new Map<string, Map<number, [weight: number, unixSec: number]>>();
  /** Device → the user it was seen with (first link wins, as in the builder's histories). */
  const deviceUser = new Map<string, string>();
  let eventsPosition = 0;
  let newestSec = 0;
  for (const { seq, event } of new EventLog(store).after(environment, 0)) {
    eventsPosition = seq;
    const e = event.e;
    if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
    const weight = eventWeight(eventWeights, e);
    const userId = str(e.user_id);
    const deviceId = str(e.device_id);
    if (userId && deviceId && !deviceUser.has(deviceId)) deviceUser.set(deviceId, userId);
    // Prefixed: a user id and a device id may be the same string without being the same person.
    const who = userId ? `u\u0000${userId}` : deviceId ? `d\u0000${deviceId}` : undefined;
    const itemId = str(e.action_item);
    const itemType = str(e.action_item_type);
    if (!(weight > 0) || !who || !itemId || !itemType || !config.itemTypes.includes(itemType)) continue;
    const itemKey = `${itemType}\u0000${itemId}`;
    let ix = itemIx.get(itemKey);
    if (ix === undefined) {
      // Not yet indexed: the model builder has not reached it; the next build will.
      ix = store.itemIndex.get([environment, itemType, itemId]) ?? -1;
      itemIx.set(itemKey, ix);
    }
    if (ix < 0) continue;
    const unixSec = Math.floor(event.t / 1000);
    if (unixSec > newestSec) newestSec = unixSec;
    let items = byUser.get(who);
    if (!items) byUser.set(who, (items = new Map()));
    const seen = items.get(ix);
    if (!seen) items.set(ix, [weight, unixSec]);
    else if (weight >= seen[0]) items.set(ix, [weight, Math.max(unixSec, seen[1])]);
  }

  for (const [deviceId, userId] of deviceUser) {
    const device = byUser.get(`d\u0000${deviceId}`);
    if (!device) continue;
    byUser.delete(`d\u0000${deviceId}`);
    const user = byUser.get(`u\u0000${userId}`);
    if (!user) {
      byUser.set(`u\u0000${userId}`, device);
      continue;
    }
    for (const [ix, seen] of device) {
      const mine = user.get(ix);
      if (!mine) user.set(ix, seen);
      else if (seen[0] >= mine[0]) user.set(ix, [seen[0], Math.max(seen[1], mine[1])]);
    }
  }

  // Items of two users or more become the model's columns, most consumed first (the model's
  // dense head is a prefix); ties: lower ix first, for stable builds.
  const users = new Map<number, number>();
  for (const items of byUser.values()) for (const ix of items.keys()) users.set(ix, (users.get(ix) ?? 0) + 1);
  const ranked = [...users].filter(([, count]) => count >= MIN_USERS).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const items = Uint32Array.from(ranked, ([ix]) => ix);
  const column = new Map<number, number>();
  items.forEach((ix, c) => column.set(ix, c));

  const offsets: number[] = [0];
  const cols: number[] = [];
  const values: number[] = [];
  const halfLife = trained.halfLifeSec;
  for (const consumed of byUser.values()) {
    for (const [ix, [weight, unixSec]] of consumed) {
      const c = column.get(ix);
      if (c === undefined) continue;
      cols.push(c);
      values.push(halfLife > 0 ? weight * 2 ** (-(newestSec - unixSec) / halfLife) : weight);
    }
    if (cols.length > offsets[offsets.length - 1]!) offsets.push(cols.length);
  }
  let sum = 0;
  for (const v of values) sum += v;
  const scale = values.length > 0 && sum > 0 ? values.length / sum : 1;
  return {
    items,
    rows: { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: Float32Array.from(values, (v) => v * scale) },
    users: offsets.length - 1,
    eventsPosition,
  };
}
