/**
 * @module training/training-data
 * Reads one environment's event log into the trained model's input: per user, the items they
 * consumed with a value (their strongest event's weight, domain/event-weight.ts, an imported
 * event's own weight raised to model.trained.ownWeightPower, decayed by age when
 * model.trained.halfLifeSec is set), over every item consumed by at least two users (one
 * user says nothing about what goes together), most consumed first. Values are scaled so their
 * mean is 1, which keeps λ meaningful whatever the event weights. Reads LMDB only (never
 * writes). A user is their user_id, else their device_id; a device seen with a user_id is that
 * user's, before and after the event that linked them, as in the model builder's histories.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import { EventLog, type StoredEvent } from '../store/event-log.ts';
import { EVENT_TYPE_CODES, eventsPositionKey } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import { eventWeight } from '../domain/event-weight.ts';
import type { InteractionRows } from './linear-autoencoder.ts';
import type { ConsumptionTable } from './consumption-table.ts';
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
 * snapshot (training/training-snapshot.ts) and the log after it when there is one to trust, else
 * from the whole log. `useSnapshot` false reads the whole log (the eval, and tests comparing).
 */
export function readTrainingData(store: Store, environment: string, config: EnvironmentConfig, useSnapshot = true): TrainingData {
  const { eventWeights, trained } = config.model;
  const fingerprint = fingerprintOf(config);
  const stored = useSnapshot ? readTrainingSnapshot(store, environment, fingerprint) : {};
  const pass = stored.pass ?? emptyPass();
  const readFrom = pass.position;
  const { consumers, consumed, deviceUser } = pass;
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
    let c = consumers.get(who);
    if (c === undefined) consumers.set(who, (c = consumers.size));
    consumed.note(c, ix, weight, unixSec);
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

  // A device seen with a user is that user's, before and after the link; on a copy of the owners,
  // so the pass (and a snapshot of it) keeps them apart as the log said them. A user with no
  // events of their own takes the device's row.
  const owner = new Uint32Array(consumers.size);
  for (let c = 0; c < owner.length; c++) owner[c] = c;
  for (const [deviceId, userId] of deviceUser) {
    const device = consumers.get(`d\u0000${deviceId}`);
    if (device !== undefined) owner[device] = consumers.get(`u\u0000${userId}`) ?? device;
  }
  const rows = groupByOwner(consumed, owner);

  // Items of two users or more become the model's columns, most consumed first (the model's
  // dense head is a prefix); ties: lower ix first, for stable builds.
  const users = new Uint32Array(rows.ixEnd);
  eachOwnerItem(consumed, rows, (ix) => users[ix]!++);
  const ranked: number[] = [];
  for (let ix = 0; ix < users.length; ix++) if (users[ix]! >= MIN_USERS) ranked.push(ix);
  ranked.sort((a, b) => users[b]! - users[a]! || a - b);
  const items = Uint32Array.from(ranked);
  const column = new Int32Array(rows.ixEnd).fill(-1);
  items.forEach((ix, c) => (column[ix] = c));

  let interactions = 0;
  eachOwnerItem(consumed, rows, (ix) => void (column[ix]! >= 0 && interactions++));
  const offsets: number[] = [0];
  const cols = new Uint32Array(interactions);
  const values = new Float32Array(interactions);
  const halfLife = trained.halfLifeSec;
  let k = 0;
  eachOwnerItem(
    consumed,
    rows,
    (ix, weight, unixSec) => {
      const c = column[ix]!;
      if (c < 0) return;
      cols[k] = c;
      values[k++] = halfLife > 0 ? weight * 2 ** (-(newestSec - unixSec) / halfLife) : weight;
    },
    () => {
      if (k > offsets[offsets.length - 1]!) offsets.push(k);
    },
  );
  let sum = 0;
  for (const v of values) sum += v;
  const scale = values.length > 0 && sum > 0 ? values.length / sum : 1;
  for (let e = 0; e < values.length; e++) values[e]! *= scale;
  return {
    items,
    rows: { offsets: Uint32Array.from(offsets), cols, values },
    users: offsets.length - 1,
    eventsPosition,
    readFrom,
    eventsRead,
    ...(stored.problem ? { snapshotProblem: stored.problem } : {}),
    ...(snapshot ? { snapshot } : {}),
  };
}

/** The consumption table's entries grouped by owner (owner order, then first seen): `order[start[o] .. start[o + 1])`. */
interface OwnerRows {
  start: Uint32Array;
  order: Uint32Array;
  /** One past the largest item ix. */
  ixEnd: number;
  /** Per ix, the last row that took it, and where its merged weight and time are. */
  taken: Int32Array;
  weight: Float64Array;
  sec: Uint32Array;
}

function groupByOwner(consumed: ConsumptionTable, owner: Uint32Array): OwnerRows {
  const start = new Uint32Array(owner.length + 1);
  let ixEnd = 0;
  for (let e = 0; e < consumed.length; e++) {
    start[owner[consumed.who[e]!]! + 1]!++;
    ixEnd = Math.max(ixEnd, consumed.ix[e]! + 1);
  }
  for (let o = 0; o < owner.length; o++) start[o + 1]! += start[o]!;
  const fill = start.slice(0, owner.length);
  const order = new Uint32Array(consumed.length);
  for (let e = 0; e < consumed.length; e++) order[fill[owner[consumed.who[e]!]!]!++] = e;
  return { start, order, ixEnd, taken: new Int32Array(ixEnd).fill(-1), weight: new Float64Array(ixEnd), sec: new Uint32Array(ixEnd) };
}

/**
 * Calls `each` once per (owner, item) with the item's merged weight and time (the strongest
 * weight of the owner's consumers; equal weights, the latest time), owner by owner, items in
 * first-seen order; `rowEnd` after each owner's row.
 */
function eachOwnerItem(consumed: ConsumptionTable, rows: OwnerRows, each: (ix: number, weight: number, unixSec: number) => void, rowEnd?: () => void): void {
  const { start, order, taken, weight, sec } = rows;
  taken.fill(-1);
  const distinct: number[] = [];
  for (let o = 0; o + 1 < start.length; o++) {
    if (start[o + 1] === start[o]) continue;
    distinct.length = 0;
    for (let p = start[o]!; p < start[o + 1]!; p++) {
      const e = order[p]!;
      const ix = consumed.ix[e]!;
      const w = consumed.weight[e]!;
      if (taken[ix] !== o) {
        taken[ix] = o;
        weight[ix] = w;
        sec[ix] = consumed.sec[e]!;
        distinct.push(ix);
      } else if (w > weight[ix]!) [weight[ix], sec[ix]] = [w, consumed.sec[e]!];
      else if (w === weight[ix]! && consumed.sec[e]! > sec[ix]!) sec[ix] = consumed.sec[e]!;
    }
    for (const ix of distinct) each(ix, weight[ix]!, sec[ix]!);
    rowEnd?.();
  }
}
