/**
 * @module recommend/recent-consumption
 * What each user consumed in the last moments, as the events API accepted it: the model builder
 * writes histories every flush (and can fall behind under load), but a detail_pageview must
 * exclude its item from that user's very next recommendation. The events route records here
 * after its commit; a recommendation request sends its user's entries to the worker.
 * Invalidation: two generations of users; every ROTATE_MS (or when the current one holds
 * MAX_USERS users or MAX_ENTRIES entries) the older is dropped whole, so an entry lives between
 * one and two rotations (by then the builder has written it). A user seen again carries their
 * older entries over, but only those younger than two rotations: carrying the whole list kept
 * every active user's last MAX_PER_USER events forever, which grew the process by megabytes a
 * minute under a steady load until each list was full (issue 16's soak). No per-entry expiry
 * on reads, no iteration: a Map used as an LRU (delete and re-insert) leaves holes that V8 walks
 * on every iteration from its front.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';

/**
 * The model builder writes an event within a second at a steady load and within ~15 s at the
 * events bench's peak (README, lag p99 14.3 s): an entry living 30 to 60 s (90 s carried over)
 * outlives that. 2.5 min kept five times the memory for nothing (~100 MB at 800 events/s).
 */
const ROTATE_MS = 30_000;
const MAX_USERS = 200_000;
const MAX_PER_USER = 50;
/** Entries in one generation at most (about 150 bytes each): the bound whatever the event rate. */
const MAX_ENTRIES = 500_000;

/** [itemType, itemId, unix sec, event weight] as RankTask.recent carries it. */
type Entry = [string, string, number, number];

/** One generation: per environment, entries by user id and by device id. */
type Generation = Map<string, { users: Map<string, Entry[]>; devices: Map<string, Entry[]> }>;

export class RecentConsumption {
  readonly #weights: Map<string, Readonly<Record<string, number>>>;
  #current: Generation = new Map();
  #previous: Generation = new Map();
  #currentSize = 0;
  #currentEntries = 0;
  #rotatedAt = Date.now();

  /** `weights`: each environment's model.eventWeights. */
  constructor(weights: Map<string, Readonly<Record<string, number>>>) {
    this.#weights = weights;
  }

  /** Records the consumption events of an accepted batch. */
  record(environment: string, events: readonly TrackedEvent[], nowMs = Date.now()): void {
    const weights = this.#weights.get(environment);
    if (!weights) return;
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#currentSize >= MAX_USERS || this.#currentEntries >= MAX_ENTRIES) this.#rotate(nowMs);
    const nowSec = Math.floor(nowMs / 1000);
    let current = this.#current.get(environment);
    for (const e of events) {
      if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
      const itemId = e.action_item;
      const itemType = e.action_item_type;
      if (typeof itemId !== 'string' || typeof itemType !== 'string') continue;
      const entry: Entry = [itemType, itemId, nowSec, weights[e.event_type] ?? 0];
      if (!current) this.#current.set(environment, (current = { users: new Map(), devices: new Map() }));
      const older = this.#previous.get(environment);
      if (typeof e.user_id === 'string' && e.user_id !== '') this.#add(current.users, older?.users, e.user_id, entry, nowSec);
      if (typeof e.device_id === 'string' && e.device_id !== '' && e.device_id !== 'no-consent') {
        this.#add(current.devices, older?.devices, e.device_id, entry, nowSec);
      }
    }
  }

  /** The user's and the device's recent entries (either may be absent). */
  of(environment: string, userId: string | undefined, deviceId: string): Entry[] {
    const out: Entry[] = [];
    const current = this.#current.get(environment);
    const older = this.#previous.get(environment);
    const collect = (entries: Entry[] | undefined) => entries && out.push(...entries);
    if (userId) collect(current?.users.get(userId) ?? older?.users.get(userId));
    if (deviceId !== 'no-consent') collect(current?.devices.get(deviceId) ?? older?.devices.get(deviceId));
    return out;
  }

  #add(current: Map<string, Entry[]>, older: Map<string, Entry[]> | undefined, id: string, entry: Entry, nowSec: number): void {
    let entries = current.get(id);
    if (!entries) {
      // Still recent in the older generation: carried over, so a rotation loses nothing recent;
      // what is older than two rotations the builder has long written, and stays behind.
      const oldestSec = nowSec - (2 * ROTATE_MS) / 1000;
      entries = (older?.get(id) ?? []).filter((e) => e[2] >= oldestSec);
      current.set(id, entries);
      this.#currentSize++;
      this.#currentEntries += entries.length;
    }
    entries.push(entry);
    this.#currentEntries++;
    if (entries.length > MAX_PER_USER) {
      entries.shift();
      this.#currentEntries--;
    }
  }

  #rotate(nowMs: number): void {
    this.#previous = this.#current;
    this.#current = new Map();
    this.#currentSize = 0;
    this.#currentEntries = 0;
    this.#rotatedAt = nowMs;
  }
}
