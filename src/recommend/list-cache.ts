/**
 * @module recommend/list-cache
 * Computed lists kept for later slices (GET .../recommendations/lists): the whole `list_size`
 * list under an unguessable key, for the environment's configured lifetime. In memory on the
 * main thread. Invalidation: entries expire at their deadline; past `maxItems` held in all, the
 * oldest lists go first (Map insertion order), so a client asking for many lists cannot grow the
 * cache without bound. Each list counts its item ids plus LIST_OVERHEAD_ITEMS: its key, ids and
 * objects cost about that many ids' worth, and counting ids alone let a million short lists
 * hold several times the memory the bound meant. A restart forgets every list (clients then get
 * 404, as for an expired key).
 */
import { randomKey } from '../random-pool.ts';

export interface CachedList {
  environment: string;
  requestId: string;
  userGroup: string;
  deviceId: string;
  userId?: string;
  listName: string;
  /** Item ids joined by LIST_ID_SEPARATOR: one string per list, not one per item, on the heap for up to its lifetime. */
  ids: string;
  /** The items' ix, to check them when the list is read (they may have been disabled since). */
  ix: Uint32Array;
  informationFields?: Array<string | undefined>;
}

interface Entry {
  list: CachedList;
  expiresAt: number;
  /** What the entry counts against maxItems. */
  cost: number;
}

/** A cached list's own memory (key, request id, objects, Map and queue slots) in item ids' worth (~32 bytes each). */
export const LIST_OVERHEAD_ITEMS = 16;

export class ListCache {
  readonly #maxItems: number;
  readonly #entries = new Map<string, Entry>();
  /**
   * Keys in insertion order, oldest at #head: the eviction queue. Not the Map's own order: V8
   * keeps a deleted Map entry as a hole until it rehashes, so iterating a Map used as a queue
   * from its front walks every hole left there (measured: 35 µs per put once the cache was full).
   */
  #order: string[] = [];
  #head = 0;
  #items = 0;

  constructor(maxItems: number) {
    this.#maxItems = maxItems;
  }

  /** Stores a list for `ttlSec`; returns its key (128 random bits, base64url). */
  put(list: CachedList, ttlSec: number, now = Date.now()): string {
    const key = randomKey();
    const cost = list.ix.length + LIST_OVERHEAD_ITEMS;
    if (cost > this.#maxItems) return key; // never fits: the key will answer 404
    // Expired lists leave from the front first (bounded work per put, no timer), then the oldest
    // while the new list would not fit.
    while (this.#head < this.#order.length) {
      const oldest = this.#order[this.#head]!;
      const entry = this.#entries.get(oldest);
      if (entry && entry.expiresAt > now && this.#items + cost <= this.#maxItems) break;
      if (entry) this.#drop(oldest, entry);
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    this.#entries.set(key, { list, expiresAt: now + ttlSec * 1000, cost });
    this.#order.push(key);
    this.#items += cost;
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

  /** Removes an entry; its key stays in #order until the queue reaches it (then skipped). */
  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#items -= entry.cost;
  }
}
