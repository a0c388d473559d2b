/**
 * @module recommend/recent-consumption
 * What each user and device consumed in the last moments, as the events API accepted it. The
 * model builder writes histories only when it flushes, and can fall behind under load, but a
 * detail_pageview must exclude its item from that user's very next recommendation.
 *
 * The events route (main thread) turns an accepted batch into a `consumed` notice (notices.ts);
 * each ranking worker keeps its entries here as they came, and resolves an entry's item to its
 * ix only when a request first reads it: resolving every entry on arrival (an LMDB read each)
 * took ~35% of the core in a ranking worker during a 1M-item event load without requests,
 * for users most of whom asked for nothing before the builder wrote their events. A request
 * carries nothing of them. Invalidation: two generations of users; every
 * ROTATE_MS (or when the current one holds MAX_KEYS keys or MAX_ENTRIES entries) the older is
 * dropped whole, so an entry lives between one and two rotations (by then the builder has
 * written it). A user seen again carries their older entries over, but only those younger than
 * two rotations: carrying the whole list kept every active user's last MAX_PER_KEY events for
 * ever, which grew the process by megabytes a minute under a steady load (issue 16's soak). No
 * per-entry expiry on reads, no iteration: a Map used as an LRU (delete and re-insert) leaves
 * holes that V8 walks on every iteration from its front.
 */
import { CONSUMED_STRIDE, type ConsumedEntries } from './notices.ts';

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

/**
 * Entries of one user or device, oldest first, RECENT_STRIDE values each: ix, unix sec, weight,
 * item type, item id. The ix is UNRESOLVED until a read resolves it, UNKNOWN when the item was
 * not in the catalog then (left out of every read, as an entry for an unknown item always was).
 */
type Entries = Array<number | string>;
export const RECENT_STRIDE = 5;
const UNRESOLVED = -1;
const UNKNOWN = -2;

/**
 * One generation of an environment's entries, by user id and by device id: the event's own
 * strings are the keys. A joined `environment\u0000u\u0000id` key per event was two string
 * concatenations, flattened to hash them, on the ranking thread's young heap (issue 11: GC
 * beside events).
 */
interface Generation {
  users: Map<string, Entries>;
  devices: Map<string, Entries>;
}

/** An item's ix (undefined: not an item). */
export type ResolveItem = (itemType: string, itemId: string) => number | undefined;

/** Ranking worker: recent entries by user and by device. */
export class RecentConsumption {
  /** By environment. */
  #current = new Map<string, Generation>();
  #previous = new Map<string, Generation>();
  #rotatedAt: number;
  #currentEntries = 0;

  constructor(nowMs = Date.now()) {
    this.#rotatedAt = nowMs;
  }

  /** Records consumed entries as they came (resolved when read). */
  record(environment: string, entries: ConsumedEntries, nowMs = Date.now()): void {
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#currentKeys() >= MAX_KEYS || this.#currentEntries >= MAX_ENTRIES) this.#rotate(nowMs);
    let current = this.#current.get(environment);
    if (!current) this.#current.set(environment, (current = { users: new Map(), devices: new Map() }));
    const previous = this.#previous.get(environment);
    for (let i = 0; i + CONSUMED_STRIDE <= entries.length; i += CONSUMED_STRIDE) {
      const userId = entries[i] as string;
      const deviceId = entries[i + 1] as string;
      const itemType = entries[i + 2] as string;
      const itemId = entries[i + 3] as string;
      const time = entries[i + 4] as number;
      const weight = entries[i + 5] as number;
      if (userId !== '') this.#add(current.users, previous?.users, userId, itemType, itemId, time, weight, nowMs);
      if (deviceId !== '') this.#add(current.devices, previous?.devices, deviceId, itemType, itemId, time, weight, nowMs);
    }
  }

  /**
   * The user's entries (RECENT_STRIDE values each, ix first: skip UNKNOWN), their items resolved,
   * or undefined. The returned array is the store's own: read, never change.
   */
  ofUser(environment: string, userId: string, resolve: ResolveItem): readonly (number | string)[] | undefined {
    return resolved(this.#current.get(environment)?.users.get(userId) ?? this.#previous.get(environment)?.users.get(userId), resolve);
  }

  ofDevice(environment: string, deviceId: string, resolve: ResolveItem): readonly (number | string)[] | undefined {
    return resolved(this.#current.get(environment)?.devices.get(deviceId) ?? this.#previous.get(environment)?.devices.get(deviceId), resolve);
  }

  #add(current: Map<string, Entries>, previous: Map<string, Entries> | undefined, key: string, itemType: string, itemId: string, time: number, weight: number, nowMs: number): void {
    let entries = current.get(key);
    if (!entries) {
      // Still recent in the older generation: carried over, so a rotation loses nothing recent;
      // what is older than two rotations the builder has long written, and stays behind.
      entries = [];
      const older = previous?.get(key);
      const oldestSec = (nowMs - 2 * ROTATE_MS) / 1000;
      for (let i = 0; older && i + RECENT_STRIDE <= older.length; i += RECENT_STRIDE) {
        if ((older[i + 1] as number) >= oldestSec) for (let k = 0; k < RECENT_STRIDE; k++) entries.push(older[i + k]!);
      }
      current.set(key, entries);
      this.#currentEntries += entries.length / RECENT_STRIDE;
    }
    entries.push(UNRESOLVED, time, weight, itemType, itemId);
    this.#currentEntries++;
    if (entries.length > MAX_PER_KEY * RECENT_STRIDE) {
      entries.splice(0, entries.length - MAX_PER_KEY * RECENT_STRIDE);
      this.#currentEntries--;
    }
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
    this.#previous = this.#current;
    this.#current = new Map();
    this.#currentEntries = 0;
    this.#rotatedAt = nowMs;
  }
}

/** `entries` with every UNRESOLVED ix resolved, in place (each entry is resolved once). */
function resolved(entries: Entries | undefined, resolve: ResolveItem): Entries | undefined {
  for (let i = 0; entries && i + RECENT_STRIDE <= entries.length; i += RECENT_STRIDE) {
    if (entries[i] === UNRESOLVED) entries[i] = resolve(entries[i + 3] as string, entries[i + 4] as string) ?? UNKNOWN;
  }
  return entries;
}
