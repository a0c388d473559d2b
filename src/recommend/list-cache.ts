/**
 * @module recommend/list-cache
 * Computed lists kept for later slices (GET .../recommendations/lists): the whole `list_size`
 * list under an unguessable key, for the environment's configured lifetime. In memory on the
 * main thread. Invalidation: entries expire at their deadline; past `maxEntries` the oldest go
 * first (Map insertion order). A restart forgets every list (clients then get 404, as for an
 * expired key).
 */
import { random16 } from '../random-pool.ts';

export interface CachedList {
  environment: string;
  requestId: string;
  userGroup: string;
  deviceId: string;
  userId?: string;
  listName: string;
  itemIds: string[];
  informationFields?: Array<string | undefined>;
}

interface Entry {
  list: CachedList;
  expiresAt: number;
}

export class ListCache {
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** Stores a list for `ttlSec`; returns its key (128 random bits, base64url). */
  put(list: CachedList, ttlSec: number, now = Date.now()): string {
    const key = Buffer.from(random16()).toString('base64url');
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { list, expiresAt: now + ttlSec * 1000 });
    // Drop a few expired entries from the front on every put: bounded work, no timer.
    for (const [k, e] of this.#entries) {
      if (e.expiresAt > now) break;
      this.#entries.delete(k);
    }
    return key;
  }

  /** The list under `key` if it exists, has not expired and belongs to `environment`. */
  get(environment: string, key: string, now = Date.now()): CachedList | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.list.environment === environment ? entry.list : undefined;
  }
}
