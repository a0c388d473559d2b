/**
 * @module builder/consumer-records
 * The builder's cache of consumer records (store/model-layout.ts): per user, and per device not linked
 * to a user, the recent history (histories.ts changes it) and every item ever consumed
 * (consumed-sets.ts), read from one record on first touch and written as one when either part
 * changed. Users and devices are cached by their raw id in two maps, so an event's record is
 * found without building a key (a key array and a joined string per lookup were two
 * allocations per event; issue 12's profile).
 */
import type { Key } from 'lmdb';
import { transactionSyncRetried } from '../store/commit.ts';
import { copyU32, decodeConsumerRecord, deviceRecordKey, encodeConsumerRecords, LEGACY_CONSUMER_KINDS, userRecordKey } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';

export interface ConsumerRecord {
  key: Key;
  /** Flat (ix, event type code, unix sec) triplets, oldest first (up to model.historyLength). */
  entries: number[];
  /**
   * Sorted, distinct. A plain array of small integers, not a typed array: growing a typed array
   * per user (8, 16, 32, ... entries) allocated a backing store each time and was ~3% of a
   * replay plus the GC its external memory drove (issue 12).
   */
  ix: number[];
}

/** Records moved per write transaction by migrateConsumerRecords. */
const MIGRATE_BATCH = 10_000;

export class ConsumerRecords {
  readonly #store: Store;
  readonly #env: string;
  readonly #users = new Map<string, ConsumerRecord>();
  readonly #devices = new Map<string, ConsumerRecord>();
  readonly #changed = new Set<ConsumerRecord>();
  /**
   * Whether records may be stored that are not cached: false from a fresh start (the environment
   * never written) until the cache is trimmed, so first touches skip the read (issue 12: reads of
   * keys that did not exist yet were ~5% of a replay).
   */
  #mayExist: boolean;

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, fresh = false) {
    this.#store = store;
    this.#env = env;
    this.#mayExist = !fresh;
  }

  #read(key: Key): ConsumerRecord {
    const { entries, ix } = this.#mayExist ? decodeConsumerRecord(this.#store.model.get(key)) : { entries: [], ix: [] };
    return { key, entries, ix };
  }

  user(userId: string): ConsumerRecord {
    let r = this.#users.get(userId);
    if (!r) this.#users.set(userId, (r = this.#read(userRecordKey(this.#env, userId))));
    return r;
  }

  device(deviceId: string): ConsumerRecord {
    let r = this.#devices.get(deviceId);
    if (!r) this.#devices.set(deviceId, (r = this.#read(deviceRecordKey(this.#env, deviceId))));
    return r;
  }

  /** The record is to be written with the next flush. */
  changed(r: ConsumerRecord): void {
    this.#changed.add(r);
  }

  /** Encodes what changed since the last flush; the returned function writes it (in a transaction). */
  prepareFlush(): () => void {
    const changed = [...this.#changed];
    const values = encodeConsumerRecords(changed);
    this.#changed.clear();
    return () => {
      for (let i = 0; i < changed.length; i++) {
        const bytes = values[i];
        if (bytes) this.#store.model.put(changed[i]!.key, bytes);
        else this.#store.model.remove(changed[i]!.key);
      }
    };
  }

  /**
   * Once a flush is readable: drops the cached records written when the cache holds more than
   * `max`. Those changed since the flush started stay: their stored state is older.
   */
  trim(max: number): void {
    if (this.#users.size + this.#devices.size <= max) return;
    for (const cache of [this.#users, this.#devices]) for (const [id, r] of cache) if (!this.#changed.has(r)) cache.delete(id);
    this.#mayExist = true;
  }
}

/**
 * Moves an environment's histories and consumed sets stored apart (before the consumer records)
 * into consumer records, MIGRATE_BATCH consumers per transaction; returns how many it moved.
 * The builder runs it at start, before it applies anything: the ranking workers read only the
 * consumer records, so until it is done a consumer's history and exclusions are missing (500,000
 * users: seconds, once).
 */
export function migrateConsumerRecords(store: Store, env: string): number {
  const db = store.model;
  let moved = 0;
  for (const [kind, [historyKind, consumedKind]] of Object.entries(LEGACY_CONSUMER_KINDS)) {
    for (const legacy of [historyKind, consumedKind]) {
      const range = { start: [env, legacy], end: [env, `${legacy}\u0000`] };
      // A store written in this layout (every store after its first start) opens no write transaction.
      if (db.getKeysCount({ ...range, limit: 1 }) === 0) continue;
      // Both parts of each id found: by its history's key, then (what is left) by its consumed set's.
      // Read inside the write transaction, which sees its own removals.
      for (let batch = 1; batch > 0; moved += batch) {
        batch = transactionSyncRetried(store.modelRoot, () => {
          const ids = Array.from(db.getKeys({ ...range, limit: MIGRATE_BATCH }), (key) => (key as [string, string, string])[2]);
          const parts = ids.map((id) => ({ entries: Array.from(copyU32(db.get([env, historyKind, id]))), ix: Array.from(copyU32(db.get([env, consumedKind, id]))) }));
          const values = encodeConsumerRecords(parts);
          ids.forEach((id, i) => {
            if (values[i]) db.put([env, kind, id], values[i]!);
            db.remove([env, historyKind, id]);
            db.remove([env, consumedKind, id]);
          });
          return ids.length;
        });
      }
    }
  }
  return moved;
}
