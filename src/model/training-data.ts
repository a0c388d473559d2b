/**
 * @module model/training-data
 * Reads one environment's event log into the trained model's input: per user, the items they
 * consumed with a value (their strongest event's weight, model/event-weight.ts, an imported
 * event's own weight raised to model.trained.ownWeightPower, decayed by age when
 * model.trained.halfLifeSec is set), over every item consumed by at least two users (one
 * user says nothing about what goes together), most consumed first. Values are scaled so their
 * mean is 1, which keeps λ meaningful whatever the event weights. Reads LMDB only (never
 * writes). A user is their user_id, else their device_id; a device seen with a user_id is that
 * user's, before and after the event that linked them, as in the model builder's histories.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import { EventLog, type StoredEvent } from '../store/event-log.ts';
import { EVENT_TYPE_CODES, eventsPositionKey } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { eventWeight } from './event-weight.ts';
import type { InteractionRows } from './linear-autoencoder.ts';
import { emptyPass, encodePass, readTrainingSnapshot } from './training-snapshot.ts';

export interface TrainingData {
  /** Item ix of each model column, most consumed first. */
  items: Uint32Array;
  rows: InteractionRows;
  users: number;
  /** Event sequence number read up to (inclusive). */
  eventsPosition: number;
  /** The position the log was read from (0: the whole log) and the events read after it. */
  readFrom: number;
  eventsRead: number;
  /** Why a stored snapshot was not used although one exists (the whole log was read). */
  snapshotProblem?: string;
  /** What was read up to the model builder's position, for the next build to start from. */
  snapshot?: { position: number; fingerprint: string; encoded: Buffer };
}

/** Events read on one pair of read snapshots. */
const READ_SLICE = 100_000;

/** Users an item needs to become a model column. */
const MIN_USERS = 2;

const str = (v: unknown) => (typeof v === 'string' && v !== '' && v !== 'no-consent' ? v : undefined);

/** The settings a pass's weights depend on: a snapshot made under others is not used. */
export const fingerprintOf = (config: EnvironmentConfig) =>
  JSON.stringify({ eventWeights: config.model.eventWeights, ownWeightPower: config.model.trained.ownWeightPower, itemTypes: config.itemTypes });

/**
 * The training input from every event logged for `environment` so far: from the stored
 * snapshot (model/training-snapshot.ts) and the log after it when there is one to trust, else
 * from the whole log. `useSnapshot` false reads the whole log (the eval, and tests comparing).
 */
export function readTrainingData(store: Store, environment: string, config: EnvironmentConfig, useSnapshot = true): TrainingData {
  const { eventWeights, trained } = config.model;
  const fingerprint = fingerprintOf(config);
  const stored = useSnapshot ? readTrainingSnapshot(store, environment, fingerprint) : {};
  const pass = stored.pass ?? emptyPass();
  const readFrom = pass.position;
  const { byUser, deviceUser } = pass;
  const itemIx = new Map<string, number>();
  // Events up to the builder's position have their items indexed (the builder indexes before it
  // applies): what is read up to there is final and kept for the next build. Past it, an event
  // whose item has no index yet is skipped now and must be read again next time.
  const keepUpTo = (store.modelState.get(eventsPositionKey(environment)) as number | undefined) ?? 0;
  let snapshot: TrainingData['snapshot'];
  const keep = () => {
    if (useSnapshot && pass.position > readFrom) snapshot = { position: pass.position, fingerprint, encoded: encodePass(pass) };
  };
  let eventsRead = 0;
  const take = (seq: number, event: StoredEvent): void => {
    if (seq > keepUpTo && pass.position <= keepUpTo && snapshot === undefined) keep();
    eventsRead++;
    pass.position = seq;
    const e = event.e;
    if (EVENT_TYPE_CODES[e.event_type] === undefined) return;
    const weight = eventWeight(eventWeights, e, trained.ownWeightPower);
    const userId = str(e.user_id);
    const deviceId = str(e.device_id);
    if (userId && deviceId && !deviceUser.has(deviceId)) deviceUser.set(deviceId, userId);
    // Prefixed: a user id and a device id may be the same string without being the same person.
    const who = userId ? `u\u0000${userId}` : deviceId ? `d\u0000${deviceId}` : undefined;
    const itemId = str(e.action_item);
    const itemType = str(e.action_item_type);
    if (!(weight > 0) || !who || !itemId || !itemType || !config.itemTypes.includes(itemType)) return;
    const itemKey = `${itemType}\u0000${itemId}`;
    let ix = itemIx.get(itemKey);
    if (ix === undefined) {
      // Not yet indexed: the model builder has not reached it; the next build will.
      ix = store.itemIndex.get([environment, itemType, itemId]) ?? -1;
      itemIx.set(itemKey, ix);
    }
    if (ix < 0) return;
    const unixSec = Math.floor(event.t / 1000);
    if (unixSec > pass.newestSec) pass.newestSec = unixSec;
    let items = byUser.get(who);
    if (!items) byUser.set(who, (items = new Map()));
    const seen = items.get(ix);
    if (!seen) items.set(ix, [weight, unixSec]);
    else if (weight >= seen[0]) items.set(ix, [weight, Math.max(unixSec, seen[1])]);
  };
  // In slices, each on fresh read snapshots: one snapshot held for the whole read (seconds at
  // millions of events) would keep every page the intake and the builder free meanwhile.
  const log = new EventLog(store);
  for (let sliceRead = READ_SLICE; sliceRead === READ_SLICE; ) {
    sliceRead = 0;
    for (const { seq, event } of log.after(environment, pass.position)) {
      take(seq, event);
      if (++sliceRead === READ_SLICE) break;
    }
    store.releaseReadSnapshots();
  }
  if (snapshot === undefined && pass.position <= keepUpTo) keep();
  const eventsPosition = pass.position;
  const newestSec = pass.newestSec;

  // Devices join their users on a copy: the pass (and a snapshot of it) keeps them apart, as the
  // log said them, so later links still find the device's own items.
  const merged = new Map(byUser);
  for (const [deviceId, userId] of deviceUser) {
    const device = merged.get(`d\u0000${deviceId}`);
    if (!device) continue;
    merged.delete(`d\u0000${deviceId}`);
    const own = merged.get(`u\u0000${userId}`);
    if (!own) {
      merged.set(`u\u0000${userId}`, device);
      continue;
    }
    // A new map for the user: the pass's own must not change.
    const user = new Map(own);
    merged.set(`u\u0000${userId}`, user);
    for (const [ix, seen] of device) {
      const mine = user.get(ix);
      if (!mine) user.set(ix, seen);
      else if (seen[0] >= mine[0]) user.set(ix, [seen[0], Math.max(seen[1], mine[1])]);
    }
  }

  // Items of two users or more become the model's columns, most consumed first (the model's
  // dense head is a prefix); ties: lower ix first, for stable builds.
  const users = new Map<number, number>();
  for (const items of merged.values()) for (const ix of items.keys()) users.set(ix, (users.get(ix) ?? 0) + 1);
  const ranked = [...users].filter(([, count]) => count >= MIN_USERS).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const items = Uint32Array.from(ranked, ([ix]) => ix);
  const column = new Map<number, number>();
  items.forEach((ix, c) => column.set(ix, c));

  const offsets: number[] = [0];
  const cols: number[] = [];
  const values: number[] = [];
  const halfLife = trained.halfLifeSec;
  for (const consumed of merged.values()) {
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
    readFrom,
    eventsRead,
    ...(stored.problem ? { snapshotProblem: stored.problem } : {}),
    ...(snapshot ? { snapshot } : {}),
  };
}
