/**
 * @module model/consumed-sets
 * Every item each user (and each device not linked to a user) ever consumed, kept by the builder
 * as a sorted array and written when it flushes. Histories hold only the last
 * model.historyLength entries; exclusion needs all of them: over HTTP on MovieLens 100k, 19% of
 * the recommended slots were items the user had consumed beyond the window. Four bytes per
 * consumed item, one LMDB read per request for a user and one for a device.
 */
import type { Key } from 'lmdb';
import { copyU32, deviceConsumedKey, u32Values, userConsumedKey } from '../store/model.ts';
import type { Store } from '../store/open.ts';

interface ConsumedSet {
  key: Key;
  /**
   * Sorted, distinct. A plain array of small integers, not a typed array: growing a typed array
   * per user (8, 16, 32, ... entries) allocated a backing store each time and was ~3% of a
   * replay plus the GC its external memory drove (issue 12).
   */
  ix: number[];
}

export class ConsumedSets {
  readonly #store: Store;
  readonly #env: string;
  /** By raw user id and raw device id: no key built per event (the builder applies tens of thousands a second). */
  readonly #users = new Map<string, ConsumedSet>();
  readonly #devices = new Map<string, ConsumedSet>();
  readonly #dirty = new Set<ConsumedSet>();
  /** Whether sets may be stored that are not cached: false from a fresh start until a trim (see histories.ts). */
  #mayExist: boolean;

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, fresh = false) {
    this.#store = store;
    this.#env = env;
    this.#mayExist = !fresh;
  }

  /** The set of a user (user id given) or else of a device. */
  #set(userId: string | undefined, deviceId: string | undefined): ConsumedSet {
    const cache = userId !== undefined ? this.#users : this.#devices;
    const id = userId ?? deviceId!;
    let set = cache.get(id);
    if (!set) {
      const key = userId !== undefined ? userConsumedKey(this.#env, userId) : deviceConsumedKey(this.#env, id);
      set = { key, ix: this.#mayExist ? Array.from(copyU32(this.#store.model.get(key))) : [] };
      cache.set(id, set);
    }
    return set;
  }

  /** Adds `ix` to the set of the user, or of the device when there is no user. */
  add(userId: string | undefined, deviceId: string | undefined, ix: number): void {
    const set = this.#set(userId, deviceId);
    if (insert(set, ix)) this.#dirty.add(set);
  }

  /** A device linked to a user: what it consumed becomes the user's. */
  merge(deviceId: string, userId: string): void {
    const device = this.#set(undefined, deviceId);
    if (device.ix.length === 0) return;
    const user = this.#set(userId, undefined);
    for (let i = 0; i < device.ix.length; i++) insert(user, device.ix[i]!);
    device.ix.length = 0;
    this.#dirty.add(user).add(device);
  }

  /** Encodes what changed since the last flush; the returned function writes it (in a transaction). */
  prepareFlush(): () => void {
    const dirty = [...this.#dirty];
    const values = u32Values(dirty.map((set) => set.ix));
    const writes = dirty.map((set, i): [Key, Buffer | undefined] => [set.key, values[i]]);
    this.#dirty.clear();
    return () => {
      for (const [key, bytes] of writes) {
        if (bytes) this.#store.model.put(key, bytes);
        else this.#store.model.remove(key);
      }
    };
  }

  /** Drops cached sets (all written) when the cache grows past `max` entries. */
  trim(max: number): void {
    if (this.#users.size <= max && this.#devices.size <= max) return;
    if (this.#users.size > max) this.#users.clear();
    if (this.#devices.size > max) this.#devices.clear();
    this.#mayExist = true;
  }
}

/** Inserts into the sorted set; false when it was there. */
function insert(set: ConsumedSet, ix: number): boolean {
  const a = set.ix;
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
