/**
 * @module recommend/recent-consumption
 * What each user and device consumed in the last moments, as the events API accepted it. The
 * model builder writes histories only when it flushes, and can fall behind under load, but a
 * detail_pageview must exclude its item from that user's very next recommendation.
 *
 * Two sides: the events route (main thread) turns an accepted batch into flat consumed entries
 * (consumedEntries) and posts them on the ranking channel; each ranking worker keeps them in a
 * RecentConsumption, resolved to ix once on arrival, so a request carries nothing of them and
 * resolves nothing. Invalidation: two generations of users; every ROTATE_MS (or when the current
 * one holds MAX_KEYS) the older is dropped whole, so an entry lives between one and two rotations
 * (by then the builder has written it). No per-entry expiry, no iteration: a Map used as an LRU
 * (delete and re-insert) leaves holes that V8 walks on every iteration from its front.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model.ts';
import { CONSUMED_STRIDE, type ConsumedEntries } from './ranking-channel.ts';

const ROTATE_MS = 2.5 * 60_000;
const MAX_KEYS = 200_000;
/** Entries kept per user or device (each three numbers: ix, unix sec, weight). */
const MAX_PER_KEY = 50;

/** Main thread: the consumption events of an accepted batch, flat (ranking-channel's format). */
export function consumedEntries(events: readonly TrackedEvent[], weights: Readonly<Record<string, number>>, nowMs = Date.now()): ConsumedEntries {
  const out: ConsumedEntries = [];
  const nowSec = Math.floor(nowMs / 1000);
  for (const e of events) {
    if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
    const itemId = e.action_item;
    const itemType = e.action_item_type;
    if (typeof itemId !== 'string' || typeof itemType !== 'string') continue;
    const userId = typeof e.user_id === 'string' ? e.user_id : '';
    const deviceId = typeof e.device_id === 'string' && e.device_id !== 'no-consent' ? e.device_id : '';
    if (userId === '' && deviceId === '') continue;
    out.push(userId, deviceId, itemType, itemId, nowSec, weights[e.event_type] ?? 0);
  }
  return out;
}

/** Flat [ix, unix sec, weight] triples of one user or device, oldest first. */
type Entries = number[];

const userKey = (environment: string, userId: string) => `${environment}\u0000u\u0000${userId}`;
const deviceKey = (environment: string, deviceId: string) => `${environment}\u0000d\u0000${deviceId}`;

/** Ranking worker: recent entries by user and by device, resolved to ix. */
export class RecentConsumption {
  #current = new Map<string, Entries>();
  #previous = new Map<string, Entries>();
  #rotatedAt: number;

  constructor(nowMs = Date.now()) {
    this.#rotatedAt = nowMs;
  }

  /** Records consumed entries; `resolve` gives an item's ix (undefined: unknown, skipped). */
  record(environment: string, entries: ConsumedEntries, resolve: (itemType: string, itemId: string) => number | undefined, nowMs = Date.now()): void {
    if (nowMs - this.#rotatedAt >= ROTATE_MS || this.#current.size >= MAX_KEYS) this.#rotate(nowMs);
    for (let i = 0; i + CONSUMED_STRIDE <= entries.length; i += CONSUMED_STRIDE) {
      const ix = resolve(entries[i + 2] as string, entries[i + 3] as string);
      if (ix === undefined) continue;
      const userId = entries[i] as string;
      const deviceId = entries[i + 1] as string;
      const time = entries[i + 4] as number;
      const weight = entries[i + 5] as number;
      if (userId !== '') this.#add(userKey(environment, userId), ix, time, weight);
      if (deviceId !== '') this.#add(deviceKey(environment, deviceId), ix, time, weight);
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

  #add(key: string, ix: number, time: number, weight: number): void {
    let entries = this.#current.get(key);
    if (!entries) {
      // Still recent in the older generation: carried over, so a rotation loses nothing recent.
      entries = this.#previous.get(key) ?? [];
      this.#current.set(key, entries);
    }
    entries.push(ix, time, weight);
    if (entries.length > MAX_PER_KEY * 3) entries.splice(0, entries.length - MAX_PER_KEY * 3);
  }

  #rotate(nowMs: number): void {
    this.#previous = this.#current;
    this.#current = new Map();
    this.#rotatedAt = nowMs;
  }
}
