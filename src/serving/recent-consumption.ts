/**
 * @module serving/recent-consumption
 * What each user and device consumed in the last moments, as the events API accepted it. The
 * model builder writes histories only when it flushes, and can fall behind under load, but a
 * detail_pageview must exclude its item from that user's very next recommendation.
 *
 * The events route (main thread) turns an accepted batch into a `consumed` notice (notices.ts);
 * each ranking worker keeps its entries here as they came. Items its catalog view knows are
 * resolved to their ix on arrival (a map lookup); the others only when a request first reads
 * them: resolving every entry on arrival through LMDB took ~35% of the core in a ranking worker
 * during a 1M-item event load without requests, for users most of whom asked for nothing before
 * the builder wrote their events. A request carries nothing of them. Invalidation: two
 * generations of users; every ROTATE_MS (or when the current one holds MAX_KEYS keys or
 * MAX_ENTRIES entries) the older is dropped whole, so an entry lives between one and two
 * rotations (by then the builder has written it). A user seen again carries their older entries
 * over, but only those younger than two rotations: carrying the whole list kept every active
 * user's last MAX_PER_KEY events for ever, which grew the process by megabytes a minute under a
 * steady load (issue 16's soak). No per-entry expiry on reads, no iteration: a Map used as an
 * LRU (delete and re-insert) leaves holes that V8 walks on every iteration from its front.
 */
import { CONSUMED_STRIDE, type ConsumedEntries } from './notices.ts';
import { grown, quarterMore } from '../domain/grown.ts';

/**
 * The model builder writes an event within a second at a steady load, and within seconds at the
 * events bench's peak: an entry living 30 to 60 s (90 s carried over) outlives that.
 */
const ROTATE_MS = 30_000;
const MAX_KEYS = 200_000;
/** Entries in one generation at most: the bound whatever the event rate. */
const MAX_ENTRIES = 500_000;
/** Entries kept per user or device. */
const MAX_PER_KEY = 50;

/** Entries as a read returns them, oldest first, RECENT_STRIDE values each: ix (resolved), unix sec, weight. */
type Entries = number[];
export const RECENT_STRIDE = 3;
/** The ix of an entry whose item no read has resolved yet; UNKNOWN: not in the catalog when read. */
const UNRESOLVED = -1;
const UNKNOWN = -2;
/** No previous entry. */
const NONE = -1;
/** Slots the pool starts with; it grows (a quarter more) while its next slot is still live, up to MAX_SLOTS. */
const FIRST_SLOTS = 1 << 14;
/**
 * Past this the pool reuses live slots too (entries of three generations, MAX_ENTRIES at most
 * each, fit below it): a link into an older slot is checked by its allocation number (#seq), so
 * one overwritten since is never followed.
 */
const MAX_SLOTS = 1 << 21;

/**
 * One generation of an environment's keys: a user's or device's id (the event's own string) to
 * the slot of its newest entry. A joined `environment\u0000u\u0000id` key per event was two
 * string concatenations, flattened to hash them, on the ranking thread's young heap (issue 11).
 */
interface Generation {
  users: Map<string, number>;
  devices: Map<string, number>;
}

/** An item's ix (undefined: not an item). */
export type ResolveItem = (itemType: string, itemId: string) => number | undefined;

/**
 * Ranking worker: recent entries by user and by device. Each entry is a slot of one pool of typed
 * arrays, linked to the same key's previous entry: no array or object per user, device or entry.
 * Kept as an array of entries per key (pushed, carried over, cut back), they were ~90% of a
 * ranking worker's CPU under an event load without requests, and that thread took ~3 µs an event
 * of the one core from the events API (pinned harness, 10 s: 8,400–9,900 requests/s of 10 events,
 * 12,400–13,900 with recording switched off, 13,600–14,600 with a map update alone). As a pool:
 * the worker's CPU 2.86 → 1.95 s in that harness; with the view's items resolved on arrival,
 * 10,100–10,800 → 11,800–12,200 requests/s.
 */
export class RecentConsumption {
  /** By environment. */
  #current = new Map<string, Generation>();
  #previous = new Map<string, Generation>();
  #rotatedAt: number;
  #currentEntries = 0;
  // The pool, one slot per entry.
  #time = new Uint32Array(FIRST_SLOTS);
  #weight = new Float64Array(FIRST_SLOTS);
  #ix = new Int32Array(FIRST_SLOTS);
  /** The same key's previous entry, and its allocation number when linked (a stale link no longer matches #seq). */
  #prev = new Int32Array(FIRST_SLOTS);
  #prevSeq = new Float64Array(FIRST_SLOTS);
  #seq = new Float64Array(FIRST_SLOTS);
  /**
   * Entries older than this (unix sec) are not read through this slot's link: set on a key's
   * first entry of a generation, the older generation's entries carried over (those under two
   * rotations old then) and no others.
   */
  #linkCutSec = new Float64Array(FIRST_SLOTS);
  /** Item type and id of entries not resolved yet (dropped once resolved). */
  #itemType: Array<string | undefined> = [];
  #itemId: Array<string | undefined> = [];
  #next = 0;
  #allocated = 0;
  /**
   * Allocation numbers where the current generation and the one before it began; slots from the
   * generation before that on are live (a carried entry may link there), older ones are reused.
   */
  #currentFromSeq = 1;
  #previousFromSeq = 1;
  #liveFromSeq = 1;
  /** A read's slots, newest first. */
  readonly #chain = new Int32Array(MAX_PER_KEY);
  /** What a read returns (the store's own: read it before the next read of the same kind). */
  readonly #userOut: Entries = [];
  readonly #deviceOut: Entries = [];

  constructor(nowMs = Date.now()) {
    this.#rotatedAt = nowMs;
  }

  /**
   * Records consumed entries as they came. `resolveNow` gives the ix of the items it knows at no
   * cost (the worker's catalog view: a map lookup); the others are resolved when read. An entry
   * resolved now keeps no item strings: each notice brings fresh copies, and stored in the
   * pool's long-lived arrays they were most of what the ranking worker's collections traced.
   */
  record(environment: string, entries: ConsumedEntries, nowMs = Date.now(), resolveNow?: ResolveItem): void {
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#currentKeys() >= MAX_KEYS || this.#currentEntries >= MAX_ENTRIES) this.#rotate(nowMs);
    let current = this.#current.get(environment);
    if (!current) this.#current.set(environment, (current = { users: new Map(), devices: new Map() }));
    const previous = this.#previous.get(environment);
    const carryFromSec = (nowMs - 2 * ROTATE_MS) / 1000;
    for (let i = 0; i + CONSUMED_STRIDE <= entries.length; i += CONSUMED_STRIDE) {
      const userId = entries[i] as string;
      const deviceId = entries[i + 1] as string;
      const itemType = entries[i + 2] as string;
      const itemId = entries[i + 3] as string;
      const time = entries[i + 4] as number;
      const weight = entries[i + 5] as number;
      const ix = (userId !== '' || deviceId !== '') && resolveNow ? (resolveNow(itemType, itemId) ?? UNRESOLVED) : UNRESOLVED;
      if (userId !== '') this.#add(current.users, previous?.users, userId, ix, itemType, itemId, time, weight, carryFromSec);
      if (deviceId !== '') this.#add(current.devices, previous?.devices, deviceId, ix, itemType, itemId, time, weight, carryFromSec);
    }
  }

  /**
   * The user's entries (RECENT_STRIDE values each, ix first: skip UNKNOWN), their items resolved,
   * or undefined. The returned array is the store's own, reused by the next ofUser: read, never change.
   */
  ofUser(environment: string, userId: string, resolve: ResolveItem): readonly number[] | undefined {
    const head = this.#current.get(environment)?.users.get(userId) ?? this.#previous.get(environment)?.users.get(userId);
    return head === undefined ? undefined : this.#read(head, resolve, this.#userOut);
  }

  ofDevice(environment: string, deviceId: string, resolve: ResolveItem): readonly number[] | undefined {
    const head = this.#current.get(environment)?.devices.get(deviceId) ?? this.#previous.get(environment)?.devices.get(deviceId);
    return head === undefined ? undefined : this.#read(head, resolve, this.#deviceOut);
  }

  #add(current: Map<string, number>, previous: Map<string, number> | undefined, key: string, ix: number, itemType: string, itemId: string, time: number, weight: number, carryFromSec: number): void {
    const slot = this.#allocate();
    this.#time[slot] = time;
    this.#weight[slot] = weight;
    this.#ix[slot] = ix;
    const unresolved = ix === UNRESOLVED;
    // Undefined rather than left: the slot's last entry's strings go with it.
    this.#itemType[slot] = unresolved ? itemType : undefined;
    this.#itemId[slot] = unresolved ? itemId : undefined;
    let before = current.get(key);
    // A key's first entry of the generation links to the older one's newest: carried over, the
    // entries under two rotations old; what is older the builder has long written.
    this.#linkCutSec[slot] = before === undefined ? carryFromSec : 0;
    before ??= previous?.get(key);
    this.#prev[slot] = before ?? NONE;
    this.#prevSeq[slot] = before === undefined ? -1 : this.#seq[before]!;
    current.set(key, slot);
    this.#currentEntries++;
  }

  /** The next slot round the pool that holds no live entry; the pool grows when it reaches a live one. */
  #allocate(): number {
    for (;;) {
      if (this.#next === this.#time.length) this.#next = 0;
      const slot = this.#next;
      if (this.#seq[slot]! >= this.#liveFromSeq && this.#time.length < MAX_SLOTS) {
        // Live: new slots after the pool's end, and round again later.
        const end = this.#time.length;
        this.#grow(Math.min(MAX_SLOTS, quarterMore(end, FIRST_SLOTS)));
        this.#next = end;
        continue;
      }
      this.#next++;
      this.#seq[slot] = ++this.#allocated;
      return slot;
    }
  }

  #grow(slots: number): void {
    this.#time = grown(this.#time, slots);
    this.#weight = grown(this.#weight, slots);
    this.#ix = grown(this.#ix, slots);
    this.#prev = grown(this.#prev, slots);
    this.#prevSeq = grown(this.#prevSeq, slots);
    this.#seq = grown(this.#seq, slots);
    this.#linkCutSec = grown(this.#linkCutSec, slots);
  }

  /** The entries linked from `head`, oldest first, at most MAX_PER_KEY, into `out`; resolves each once. */
  #read(head: number, resolve: ResolveItem, out: Entries): Entries {
    const chain = this.#chain;
    let n = 0;
    let cutSec = 0;
    // Newest first along the links; an entry past the cut of a link on the way ends the walk.
    for (let slot = head; n < MAX_PER_KEY; ) {
      if (this.#time[slot]! < cutSec) break;
      chain[n++] = slot;
      cutSec = Math.max(cutSec, this.#linkCutSec[slot]!);
      const before = this.#prev[slot]!;
      if (before === NONE || this.#seq[before] !== this.#prevSeq[slot]) break;
      slot = before;
    }
    out.length = n * RECENT_STRIDE;
    for (let k = n - 1, at = 0; k >= 0; k--, at += RECENT_STRIDE) {
      const slot = chain[k]!;
      if (this.#ix[slot] === UNRESOLVED) {
        this.#ix[slot] = resolve(this.#itemType[slot]!, this.#itemId[slot]!) ?? UNKNOWN;
        this.#itemType[slot] = this.#itemId[slot] = undefined;
      }
      out[at] = this.#ix[slot]!;
      out[at + 1] = this.#time[slot]!;
      out[at + 2] = this.#weight[slot]!;
    }
    return out;
  }

  /** Users and devices of the current generation, every environment's. */
  #currentKeys(): number {
    let keys = 0;
    for (const generation of this.#current.values()) keys += generation.users.size + generation.devices.size;
    return keys;
  }

  /** Forgets everything (notices were lost: what is left may be incomplete). */
  clear(): void {
    this.#current = new Map();
    this.#previous = new Map();
  }

  #rotate(nowMs: number): void {
    [this.#liveFromSeq, this.#previousFromSeq, this.#currentFromSeq] = [this.#previousFromSeq, this.#currentFromSeq, this.#allocated + 1];
    this.#previous = this.#current;
    this.#current = new Map();
    this.#currentEntries = 0;
    this.#rotatedAt = nowMs;
  }
}
