/**
 * @module builder/consumed-sets
 * Every item each user (and each device not linked to a user) ever consumed, kept by the builder
 * as a sorted array in the consumer's record (consumer-records.ts) and written when it flushes.
 * Histories hold only the last model.historyLength entries; exclusion needs all of them: over
 * HTTP on MovieLens 100k, 19% of the recommended slots were items the user had consumed beyond
 * the window. Four bytes per consumed item, read with the history by each request.
 */
import type { ConsumerRecord, ConsumerRecords } from './consumer-records.ts';

export class ConsumedSets {
  readonly #records: ConsumerRecords;

  constructor(records: ConsumerRecords) {
    this.#records = records;
  }

  /** The record of a user (user id given) or else of a device. */
  #record(userId: string | undefined, deviceId: string | undefined): ConsumerRecord {
    return userId !== undefined ? this.#records.user(userId) : this.#records.device(deviceId!);
  }

  /** Adds `ix` to the set of the user, or of the device when there is no user. */
  add(userId: string | undefined, deviceId: string | undefined, ix: number): void {
    const record = this.#record(userId, deviceId);
    if (insert(record.ix, ix)) this.#records.changed(record);
  }

  /** A device linked to a user: what it consumed becomes the user's. */
  merge(deviceId: string, userId: string): void {
    const device = this.#records.device(deviceId);
    if (device.ix.length === 0) return;
    const user = this.#records.user(userId);
    for (let i = 0; i < device.ix.length; i++) insert(user.ix, device.ix[i]!);
    device.ix.length = 0;
    this.#records.changed(user);
    this.#records.changed(device);
  }
}

/** Inserts into the sorted set; false when it was there. */
function insert(a: number[], ix: number): boolean {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < ix) lo = mid + 1;
    else hi = mid;
  }
  if (lo < a.length && a[lo] === ix) return false;
  a.push(ix);
  for (let i = a.length - 1; i > lo; i--) a[i] = a[i - 1]!;
  a[lo] = ix;
  return true;
}
