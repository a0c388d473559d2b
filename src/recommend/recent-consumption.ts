/**
 * @module recommend/recent-consumption
 * What each user and device consumed in the last moments, as the events API accepted it. The
 * model builder writes histories only when it flushes, and can fall behind under load, but a
 * detail_pageview must exclude its item from that user's very next recommendation.
 *
 * The events route (main thread) turns an accepted batch into a `consumed` notice (notices.ts);
 * each ranking worker keeps its entries here, resolved to ix once on arrival, so a request
 * carries nothing of them and resolves nothing. Invalidation: two generations of users; every
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
/** Entries kept per user or device (each three numbers: ix, unix sec, weight). */
const MAX_PER_KEY = 50;

/** Flat [ix, unix sec, weight] triples of one user or device, oldest first. */
type Entries = number[];

const userKey = (environment: string, userId: string) => `${environment}\u0000u\u0000${userId}`;
const deviceKey = (environment: string, deviceId: string) => `${environment}\u0000d\u0000${deviceId}`;

/** Ranking worker: recent entries by user and by device, resolved to ix. */
export class RecentConsumption {
  #current = new Map<string, Entries>();
  #previous = new Map<string, Entries>();
  #rotatedAt: number;
  #currentEntries = 0;

  constructor(nowMs = Date.now()) {
    this.#rotatedAt = nowMs;
  }

  /** Records consumed entries; `resolve` gives an item's ix (undefined: unknown, skipped). */
  record(environment: string, entries: ConsumedEntries, resolve: (itemType: string, itemId: string) => number | undefined, nowMs = Date.now()): void {
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#current.size >= MAX_KEYS || this.#currentEntries >= MAX_ENTRIES) this.#rotate(nowMs);
    for (let i = 0; i + CONSUMED_STRIDE <= entries.length; i += CONSUMED_STRIDE) {
      const ix = resolve(entries[i + 2] as string, entries[i + 3] as string);
      if (ix === undefined) continue;
      const userId = entries[i] as string;
      const deviceId = entries[i + 1] as string;
      const time = entries[i + 4] as number;
      const weight = entries[i + 5] as number;
      if (userId !== '') this.#add(userKey(environment, userId), ix, time, weight, nowMs);
      if (deviceId !== '') this.#add(deviceKey(environment, deviceId), ix, time, weight, nowMs);
    }
  }

  /** The user's entries, or undefined (the returned array is the store's own: read, never change). */
  ofUser(environment: string, userId: string): readonly number[] | undefined {
    const key = userKey(environment, userId);
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  ofDevice(environment: string, deviceId: string): readonly number[] | undefined {
    const key = deviceKey(environment, deviceId);
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  #add(key: string, ix: number, time: number, weight: number, nowMs: number): void {
    let entries = this.#current.get(key);
    if (!entries) {
      // Still recent in the older generation: carried over, so a rotation loses nothing recent;
      // what is older than two rotations the builder has long written, and stays behind.
      entries = [];
      const older = this.#previous.get(key);
      const oldestSec = (nowMs - 2 * ROTATE_MS) / 1000;
      for (let i = 0; older && i + 2 < older.length; i += 3) if (older[i + 1]! >= oldestSec) entries.push(older[i]!, older[i + 1]!, older[i + 2]!);
      this.#current.set(key, entries);
      this.#currentEntries += entries.length / 3;
    }
    entries.push(ix, time, weight);
    this.#currentEntries++;
    if (entries.length > MAX_PER_KEY * 3) {
      entries.splice(0, entries.length - MAX_PER_KEY * 3);
      this.#currentEntries--;
    }
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
