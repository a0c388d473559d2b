/**
 * @module recommend/list-cache
 * Computed lists kept for later slices (GET .../recommendations/lists): the whole `list_size`
 * list under an unguessable key, for the environment's configured lifetime. In memory on the
 * main thread. Invalidation: entries expire at their deadline; past `maxItems` item ids held in
 * all, the oldest lists go first (Map insertion order), so a client asking for many long lists
 * cannot grow the cache without bound. A restart forgets every list (clients then get 404, as
 * for an expired key).
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
  readonly #maxItems: number;
  readonly #entries = new Map<string, Entry>();
  #items = 0;

  constructor(maxItems: number) {
    this.#maxItems = maxItems;
  }

  /** Stores a list for `ttlSec`; returns its key (128 random bits, base64url). */
  put(list: CachedList, ttlSec: number, now = Date.now()): string {
    const key = Buffer.from(random16()).toString('base64url');
    if (list.itemIds.length > this.#maxItems) return key; // never fits: the key will answer 404
    // Expired lists leave from the front first (bounded work per put, no timer), then the oldest
    // while the new list would not fit.
    for (const [k, e] of this.#entries) {
      if (e.expiresAt > now && this.#items + list.itemIds.length <= this.#maxItems) break;
      this.#drop(k, e);
    }
    this.#entries.set(key, { list, expiresAt: now + ttlSec * 1000 });
    this.#items += list.itemIds.length;
    return key;
  }

  /** The list under `key` if it exists, has not expired and belongs to `environment`. */
  get(environment: string, key: string, now = Date.now()): CachedList | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#drop(key, entry);
      return undefined;
    }
    return entry.list.environment === environment ? entry.list : undefined;
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#items -= entry.list.itemIds.length;
  }
}
