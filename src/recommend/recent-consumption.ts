/**
 * @module recommend/recent-consumption
 * What each user consumed in the last moments, as the events API accepted it: the model builder
 * writes histories every flush (and can fall behind under load), but a detail_pageview must
 * exclude its item from that user's very next recommendation. The events route records here
 * after its commit; a recommendation request sends its user's entries to the worker.
 * Invalidation: entries older than RETENTION_MS are dropped (by then the builder has written
 * them) on a sweep every SWEEP_MS; past MAX_USERS the oldest users go first.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';

const RETENTION_MS = 5 * 60_000;
const SWEEP_MS = 10_000;
const MAX_USERS = 200_000;
const MAX_PER_USER = 50;

/** [itemType, itemId, unix sec, event weight] as RankTask.recent carries it. */
type Entry = [string, string, number, number];

interface UserEntries {
  entries: Entry[];
  lastMs: number;
}

export class RecentConsumption {
  readonly #weights: Map<string, Readonly<Record<string, number>>>;
  readonly #users = new Map<string, UserEntries>();
  #sweptAt = Date.now();

  /** `weights`: each environment's model.eventWeights. */
  constructor(weights: Map<string, Readonly<Record<string, number>>>) {
    this.#weights = weights;
  }

  /** Records the consumption events of an accepted batch. */
  record(environment: string, events: readonly TrackedEvent[], nowMs = Date.now()): void {
    const weights = this.#weights.get(environment);
    if (!weights) return;
    for (const e of events) {
      if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
      const itemId = e.action_item;
      const itemType = e.action_item_type;
      if (typeof itemId !== 'string' || typeof itemType !== 'string') continue;
      const entry: Entry = [itemType, itemId, Math.floor(nowMs / 1000), weights[e.event_type] ?? 0];
      if (typeof e.user_id === 'string' && e.user_id !== '') this.#add(`${environment}\u0000u\u0000${e.user_id}`, entry, nowMs);
      if (typeof e.device_id === 'string' && e.device_id !== '' && e.device_id !== 'no-consent') {
        this.#add(`${environment}\u0000d\u0000${e.device_id}`, entry, nowMs);
      }
    }
    if (nowMs - this.#sweptAt >= SWEEP_MS) this.#sweep(nowMs);
  }

  /** The user's and the device's recent entries (either may be absent). */
  of(environment: string, userId: string | undefined, deviceId: string): Entry[] {
    const out: Entry[] = [];
    if (userId) out.push(...(this.#users.get(`${environment}\u0000u\u0000${userId}`)?.entries ?? []));
    if (deviceId !== 'no-consent') out.push(...(this.#users.get(`${environment}\u0000d\u0000${deviceId}`)?.entries ?? []));
    return out;
  }

  #add(key: string, entry: Entry, nowMs: number): void {
    let user = this.#users.get(key);
    if (user) {
      // Re-inserted so Map order stays oldest-activity first for the sweep and the bound.
      this.#users.delete(key);
    } else {
      user = { entries: [], lastMs: nowMs };
      if (this.#users.size >= MAX_USERS) this.#users.delete(this.#users.keys().next().value!);
    }
    user.entries.push(entry);
    if (user.entries.length > MAX_PER_USER) user.entries.shift();
    user.lastMs = nowMs;
    this.#users.set(key, user);
  }

  #sweep(nowMs: number): void {
    this.#sweptAt = nowMs;
    for (const [key, user] of this.#users) {
      if (nowMs - user.lastMs < RETENTION_MS) break;
      this.#users.delete(key);
    }
  }
}
