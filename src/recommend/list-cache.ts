/**
 * @module recommend/list-cache
 * Computed lists kept for later slices (GET .../recommendations/lists): the whole `list_size`
 * list under an unguessable key, for the environment's configured lifetime. In memory on the
 * main thread. Invalidation: entries expire at their deadline; past `maxItems` held in all, the
 * oldest lists go first, so a client asking for many lists cannot grow the cache without bound.
 * Each list counts its item ids plus LIST_OVERHEAD_ITEMS: its key, ids and fields cost about
 * that many ids' worth, and counting ids alone let a million short lists hold several times the
 * memory the bound meant. A restart forgets every list (clients then get 404, as for an expired
 * key).
 *
 * Laid out for the garbage collector: two lists per request live for minutes, so whatever
 * objects a list keeps survive the main thread's scavenges and get promoted (they made ~40% of
 * its GC pause time and its longest pauses at the benchmark's load). A list is therefore a slot
 * in parallel arrays, its ix a range of one ring of u32, and its key names the slot: 4 bytes of
 * slot number and 12 random bytes (96 unguessable bits) checked against the slot's, which a
 * later list in the slot replaces. No Map, key string or typed array per list is kept; one small
 * object holds the list's strings.
 */
import { random16 } from '../random-pool.ts';

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

/** A cached list's own memory (key, request id, objects, Map and queue slots) in item ids' worth (~32 bytes each). */
export const LIST_OVERHEAD_ITEMS = 16;
const TAG_WORDS = 3;
const KEY_BYTES = 16;

export class ListCache {
  readonly #maxItems: number;
  /** Slots: more than the most lists the budget can hold (each costs at least LIST_OVERHEAD_ITEMS). */
  readonly #slots: number;
  /** Serial number of each slot's list (slot = serial % #slots); -1 when empty. */
  readonly #serial: Float64Array;
  readonly #tag: Uint32Array;
  readonly #expiresAt: Float64Array;
  readonly #ixAt: Int32Array;
  readonly #ixCount: Int32Array;
  /** One field per slot: the strings are shared with the request, not copied. */
  readonly #fields: Array<Omit<CachedList, 'ix'> | undefined>;
  /** The lists' ix, one after another, wrapping to 0 where a list would not fit before the end. */
  readonly #ring: Uint32Array;
  #ringAt = 0;
  /** Serial of the next list and of the oldest one held. */
  #next = 0;
  #oldest = 0;
  #items = 0;

  constructor(maxItems: number) {
    this.#maxItems = maxItems;
    this.#slots = Math.floor(maxItems / LIST_OVERHEAD_ITEMS) + 1;
    this.#serial = new Float64Array(this.#slots).fill(-1);
    this.#tag = new Uint32Array(this.#slots * TAG_WORDS);
    this.#expiresAt = new Float64Array(this.#slots);
    this.#ixAt = new Int32Array(this.#slots);
    this.#ixCount = new Int32Array(this.#slots);
    this.#fields = new Array<Omit<CachedList, 'ix'> | undefined>(this.#slots);
    this.#ring = new Uint32Array(Math.max(1, maxItems));
  }

  /** Stores a list for `ttlSec`; returns its key (16 bytes, base64url). */
  put(list: CachedList, ttlSec: number, now = Date.now()): string {
    const random = random16();
    const count = list.ix.length;
    const cost = count + LIST_OVERHEAD_ITEMS;
    const serial = this.#next;
    const slot = serial % this.#slots;
    // The first 4 random bytes give way to the slot; the other 12 are its tag.
    const bytes = Buffer.from(random);
    bytes.writeUInt32BE(slot, 0);
    const key = bytes.toString('base64url');
    if (cost > this.#maxItems) return key; // never fits: the key will answer 404 (its slot is never written)
    let at = this.#ringAt + count > this.#ring.length ? 0 : this.#ringAt;
    // Expired lists leave from the front first (bounded work per put, no timer), then the oldest
    // while the new list would not fit in the budget or its ix would overwrite theirs.
    while (this.#oldest < this.#next) {
      const slot = this.#oldest % this.#slots;
      const live = this.#serial[slot] === this.#oldest;
      if (live && this.#expiresAt[slot]! > now && this.#items + cost <= this.#maxItems && !this.#overlaps(slot, at, count)) break;
      if (live) this.#drop(slot);
      this.#oldest++;
    }
    if (this.#oldest === this.#next) at = this.#ringAt = 0;
    this.#next++;
    this.#serial[slot] = serial;
    this.#tag.set(new Uint32Array(random.buffer, random.byteOffset + 4, TAG_WORDS), slot * TAG_WORDS);
    this.#expiresAt[slot] = now + ttlSec * 1000;
    this.#ixAt[slot] = at;
    this.#ixCount[slot] = count;
    this.#ring.set(list.ix, at);
    this.#ringAt = at + count;
    const { ix: _ix, ...fields } = list;
    this.#fields[slot] = fields;
    this.#items += cost;
    return key;
  }
  /** The list under `key` if it exists, has not expired and belongs to `environment`. */
  get(environment: string, key: string, now = Date.now()): CachedList | undefined {
    if (key.length !== 22) return undefined;
    const bytes = Buffer.from(key, 'base64url');
    if (bytes.length !== KEY_BYTES) return undefined;
    const slot = bytes.readUInt32BE(0);
    if (slot >= this.#slots || this.#serial[slot] === -1) return undefined;
    for (let w = 0; w < TAG_WORDS; w++) if (this.#tag[slot * TAG_WORDS + w] !== bytes.readUInt32LE(4 + 4 * w) >>> 0) return undefined;
    if (this.#expiresAt[slot]! <= now) return undefined;
    const fields = this.#fields[slot]!;
    if (fields.environment !== environment) return undefined;
    const at = this.#ixAt[slot]!;
    return { ...fields, ix: this.#ring.slice(at, at + this.#ixCount[slot]!) };
  }

  /** Whether the slot's ix lie in [at, at + count). */
  #overlaps(slot: number, at: number, count: number): boolean {
    const from = this.#ixAt[slot]!;
    return count > 0 && from < at + count && at < from + this.#ixCount[slot]!;
  }

  #drop(slot: number): void {
    this.#serial[slot] = -1;
    this.#fields[slot] = undefined;
    this.#items -= this.#ixCount[slot]! + LIST_OVERHEAD_ITEMS;
  }
}
