/**
 * @module main-thread/list-cache
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
 * its GC pause time and its longest pauses at the benchmark's load). A list is therefore a
 * record in one byte ring outside the JS heap (its ix, then its strings as UTF-8) and a slot in
 * typed arrays; its key names the slot: 4 bytes of slot number and 12 random bytes (96
 * unguessable bits) checked against the slot's, which a later list in the slot replaces. No
 * Map, key, string or object per list stays on the heap (information fields, rare, excepted).
 * The ring holds RING_BYTES_PER_ITEM bytes per item of the budget; lists with unusually long ids
 * may fill it first, and then the oldest go first just the same.
 */
import { random16 } from './random-pool.ts';

export interface CachedList {
  environment: string;
  requestId: string;
  userGroup: string;
  deviceId: string;
  userId?: string;
  listName: string;
  /** Item ids joined by LIST_ID_SEPARATOR (kept as UTF-8 in the ring, a string again when read). */
  ids: string;
  /** The items' ix, to check them when the list is read (they may have been disabled since). */
  ix: Uint32Array;
  informationFields?: Array<string | undefined>;
}

/** A cached list's own memory (its request's fields in the ring, its slot) in item ids' worth (~32 bytes each). */
export const LIST_OVERHEAD_ITEMS = 16;
/** Ring bytes per item of the budget: an ix (4) and an id of ~27 bytes with its separator; the overhead items hold the request's fields. */
const RING_BYTES_PER_ITEM = 32;
const TAG_WORDS = 3;
const KEY_BYTES = 16;
/** The strings of a record, in this order. */
const TEXT_FIELDS = ['environment', 'requestId', 'userGroup', 'deviceId', 'userId', 'listName', 'ids'] as const;

export class ListCache {
  readonly #maxItems: number;
  /** Slots: more than the most lists the budget can hold (each costs at least LIST_OVERHEAD_ITEMS). */
  readonly #slots: number;
  /** Serial number of each slot's list (slot = serial % #slots); -1 when empty. */
  readonly #serial: Float64Array;
  readonly #tag: Uint32Array;
  readonly #expiresAt: Float64Array;
  /** Where each slot's record starts in the ring (a multiple of 4), its ix count and its bytes. */
  readonly #at: Int32Array;
  readonly #ixCount: Int32Array;
  readonly #bytes: Int32Array;
  /** Byte length of each of a slot's TEXT_FIELDS. */
  readonly #textBytes: Int32Array;
  readonly #information: Array<Array<string | undefined> | undefined>;
  /** Records one after another, wrapping to 0 where one would not fit before the end. */
  readonly #ring: Buffer;
  readonly #ringU32: Uint32Array;
  #ringAt = 0;
  readonly #key = Buffer.alloc(KEY_BYTES);
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
    this.#at = new Int32Array(this.#slots);
    this.#ixCount = new Int32Array(this.#slots);
    this.#bytes = new Int32Array(this.#slots);
    this.#textBytes = new Int32Array(this.#slots * TEXT_FIELDS.length);
    this.#information = new Array<Array<string | undefined> | undefined>(this.#slots);
    this.#ring = Buffer.allocUnsafeSlow(Math.max(4, maxItems * RING_BYTES_PER_ITEM));
    this.#ringU32 = new Uint32Array(this.#ring.buffer, this.#ring.byteOffset, this.#ring.length >> 2);
  }

  /** Stores a list for `ttlSec`; returns its key (16 bytes, base64url). */
  put(list: CachedList, ttlSec: number, now = Date.now()): string {
    const random = random16();
    const count = list.ix.length;
    const cost = count + LIST_OVERHEAD_ITEMS;
    const serial = this.#next;
    const slot = serial % this.#slots;
    // The first 4 random bytes give way to the slot; the other 12 are its tag.
    this.#key.set(random);
    this.#key.writeUInt32BE(slot, 0);
    const key = this.#key.toString('base64url');
    let bytes = count * 4;
    for (const field of TEXT_FIELDS) bytes += Buffer.byteLength(list[field] ?? '');
    bytes = (bytes + 3) & ~3;
    // Never fits: the key will answer 404 (its slot is never written).
    if (cost > this.#maxItems || bytes > this.#ring.length) return key;
    const wraps = this.#ringAt + bytes > this.#ring.length;
    let at = wraps ? 0 : this.#ringAt;
    // Expired lists leave from the front first (bounded work per put, no timer), then the oldest
    // while the new list would not fit in the budget or its record would overwrite theirs. A
    // record that wraps to 0 lands on the newest lists when the held ones already wrapped: those
    // behind the write position are older and go first (lists leave oldest first).
    while (this.#oldest < this.#next) {
      const oldest = this.#oldest % this.#slots;
      const live = this.#serial[oldest] === this.#oldest;
      const inTheWay = this.#overlaps(oldest, at, bytes) || (wraps && this.#at[oldest]! >= this.#ringAt);
      if (live && this.#expiresAt[oldest]! > now && this.#items + cost <= this.#maxItems && !inTheWay) break;
      if (live) this.#drop(oldest);
      this.#oldest++;
    }
    if (this.#oldest === this.#next) at = 0;
    this.#next++;
    this.#serial[slot] = serial;
    this.#tag.set(new Uint32Array(random.buffer, random.byteOffset + 4, TAG_WORDS), slot * TAG_WORDS);
    this.#expiresAt[slot] = now + ttlSec * 1000;
    this.#at[slot] = at;
    this.#ixCount[slot] = count;
    this.#bytes[slot] = bytes;
    this.#ringU32.set(list.ix, at >> 2);
    let textAt = at + count * 4;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const written = this.#ring.write(list[TEXT_FIELDS[f]!] ?? '', textAt, 'utf8');
      this.#textBytes[slot * TEXT_FIELDS.length + f] = written;
      textAt += written;
    }
    this.#information[slot] = list.informationFields;
    this.#ringAt = at + bytes;
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
    const at = this.#at[slot]!;
    const count = this.#ixCount[slot]!;
    const text: string[] = [];
    let textAt = at + count * 4;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const length = this.#textBytes[slot * TEXT_FIELDS.length + f]!;
      text.push(this.#ring.toString('utf8', textAt, textAt + length));
      textAt += length;
    }
    const [listEnvironment = '', requestId = '', userGroup = '', deviceId = '', userId = '', listName = '', ids = ''] = text;
    if (listEnvironment !== environment) return undefined;
    const information = this.#information[slot];
    return {
      environment,
      requestId,
      userGroup,
      deviceId,
      ...(userId !== '' ? { userId } : {}),
      listName,
      ids,
      ix: this.#ringU32.slice(at >> 2, (at >> 2) + count),
      ...(information ? { informationFields: information } : {}),
    };
  }

  /** Whether the slot's record lies in [at, at + bytes). */
  #overlaps(slot: number, at: number, bytes: number): boolean {
    const from = this.#at[slot]!;
    return from < at + bytes && at < from + this.#bytes[slot]!;
  }

  #drop(slot: number): void {
    this.#serial[slot] = -1;
    this.#information[slot] = undefined;
    this.#items -= this.#ixCount[slot]! + LIST_OVERHEAD_ITEMS;
  }
}
