/**
 * @module recommend/recent-consumption
 * What each user consumed in the last moments, as the events API accepted it: the model builder
 * writes histories every flush (and can fall behind under load), but a detail_pageview must
 * exclude its item from that user's very next recommendation. The events route records here
 * after its commit; a recommendation request sends its user's entries to the worker.
 * Invalidation: two generations of users; every ROTATE_MS (or when the current one holds
 * MAX_USERS) the older is dropped whole, so an entry lives between one and two rotations (by
 * then the builder has written it). No per-entry expiry, no iteration: a Map used as an LRU
 * (delete and re-insert) leaves holes that V8 walks on every iteration from its front.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';

const ROTATE_MS = 2.5 * 60_000;
const MAX_USERS = 200_000;
const MAX_PER_USER = 50;

/** [itemType, itemId, unix sec, event weight] as RankTask.recent carries it. */
type Entry = [string, string, number, number];

export class RecentConsumption {
  readonly #weights: Map<string, Readonly<Record<string, number>>>;
  #current = new Map<string, Entry[]>();
  #previous = new Map<string, Entry[]>();
  #rotatedAt = Date.now();

  /** `weights`: each environment's model.eventWeights. */
  constructor(weights: Map<string, Readonly<Record<string, number>>>) {
    this.#weights = weights;
  }

  /** Records the consumption events of an accepted batch. */
  record(environment: string, events: readonly TrackedEvent[], nowMs = Date.now()): void {
    const weights = this.#weights.get(environment);
    if (!weights) return;
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#current.size >= MAX_USERS) this.#rotate(nowMs);
    for (const e of events) {
      if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
      const itemId = e.action_item;
      const itemType = e.action_item_type;
      if (typeof itemId !== 'string' || typeof itemType !== 'string') continue;
      const entry: Entry = [itemType, itemId, Math.floor(nowMs / 1000), weights[e.event_type] ?? 0];
      if (typeof e.user_id === 'string' && e.user_id !== '') this.#add(`${environment}\u0000u\u0000${e.user_id}`, entry);
      if (typeof e.device_id === 'string' && e.device_id !== '' && e.device_id !== 'no-consent') {
        this.#add(`${environment}\u0000d\u0000${e.device_id}`, entry);
      }
    }
  }

  /** The user's and the device's recent entries (either may be absent). */
  of(environment: string, userId: string | undefined, deviceId: string): Entry[] {
    const out: Entry[] = [];
    if (userId) this.#collect(`${environment}\u0000u\u0000${userId}`, out);
    if (deviceId !== 'no-consent') this.#collect(`${environment}\u0000d\u0000${deviceId}`, out);
    return out;
  }

  #collect(key: string, out: Entry[]): void {
    const entries = this.#current.get(key) ?? this.#previous.get(key);
    if (entries) out.push(...entries);
  }

  #add(key: string, entry: Entry): void {
    let entries = this.#current.get(key);
    if (!entries) {
      // Still recent in the older generation: carried over, so a rotation loses nothing recent.
      entries = this.#previous.get(key) ?? [];
      this.#current.set(key, entries);
    }
    entries.push(entry);
    if (entries.length > MAX_PER_USER) entries.shift();
  }

  #rotate(nowMs: number): void {
    this.#previous = this.#current;
    this.#current = new Map();
    this.#rotatedAt = nowMs;
  }
}
