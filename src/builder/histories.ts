/**
 * @module builder/histories
 * Per-user and per-device recent items, kept in memory by the builder (in its consumer records,
 * consumer-records.ts) and written when it flushes. A device seen with a user_id is linked to
 * that user: its history is merged into the user's and later events of either go to the user's
 * history.
 */
import type { Store } from '../store/open.ts';
import type { ConsumerRecord, ConsumerRecords } from './consumer-records.ts';

const linkKey = (env: string, deviceId: string) => [env, 'link', deviceId];

/** A consumer's history: its record's `entries`, flat (ix, event type code, unix sec) triplets, oldest first. */
export type History = ConsumerRecord;

export class HistoryState {
  readonly #store: Store;
  readonly #env: string;
  readonly #cap: number;
  readonly #records: ConsumerRecords;
  /** Device → linked user; '' caches "not linked" so unlinked devices cost one read, not one per event. */
  readonly #links = new Map<string, string>();
  readonly #newLinks = new Map<string, string>();
  /**
   * Whether links may be stored that are not cached: false from a fresh start (the environment
   * never written) until the cache is trimmed, so first touches skip the read (issue 12: reads of
   * keys that did not exist yet were ~5% of a replay).
   */
  #linksMayExist: boolean;

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, historyLength: number, records: ConsumerRecords, fresh = false) {
    this.#store = store;
    this.#env = env;
    this.#cap = historyLength;
    this.#records = records;
    this.#linksMayExist = !fresh;
  }

  linkedUser(deviceId: string): string | undefined {
    let user = this.#links.get(deviceId);
    if (user === undefined) {
      user = this.#linksMayExist ? ((this.#store.modelState.get(linkKey(this.#env, deviceId)) as string | undefined) ?? '') : '';
      this.#links.set(deviceId, user);
    }
    return user === '' ? undefined : user;
  }

  /**
   * Links a device to a user, merging the device's history into the user's on first sight.
   * Returns the merged entries, oldest first, each as [ix, type code, unix sec, 1 if it came
   * from the device else 0] (undefined when nothing was merged): the caller pairs what the two
   * histories consumed apart.
   */
  link(deviceId: string, userId: string): number[][] | undefined {
    if (this.linkedUser(deviceId) === userId) return undefined;
    this.#links.set(deviceId, userId);
    this.#newLinks.set(deviceId, userId);
    const device = this.#records.device(deviceId);
    if (device.entries.length === 0) return undefined;
    const user = this.#records.user(userId);
    const merged: number[][] = [];
    for (const [list, fromDevice] of [[user.entries, 0], [device.entries, 1]] as const) {
      for (let i = 0; i + 2 < list.length; i += 3) merged.push([list[i]!, list[i + 1]!, list[i + 2]!, fromDevice]);
    }
    // Stable: at equal times the user's entries stay first.
    merged.sort((a, b) => a[2]! - b[2]!);
    const kept = merged.slice(-this.#cap);
    user.entries = kept.flatMap((e) => [e[0]!, e[1]!, e[2]!]);
    device.entries = [];
    this.#records.changed(user);
    this.#records.changed(device);
    return kept;
  }

  /** The history an event of this user/device belongs to; none for anonymous devices. */
  historyFor(userId: string | undefined, deviceId: string | undefined): History | undefined {
    if (userId) return this.#records.user(userId);
    if (!deviceId || deviceId === 'no-consent') return undefined;
    const linked = this.linkedUser(deviceId);
    return linked ? this.#records.user(linked) : this.#records.device(deviceId);
  }

  /** Up to `n` most recent distinct item indices of a history other than `except`, newest first. */
  recentItems(h: History, n: number, except: number, out: number[]): number[] {
    out.length = 0;
    const entries = h.entries;
    for (let i = entries.length - 3; i >= 0 && out.length < n; i -= 3) {
      const ix = entries[i]!;
      if (ix !== except && !out.includes(ix)) out.push(ix);
    }
    return out;
  }

  append(h: History, ix: number, typeCode: number, unixSec: number): void {
    h.entries.push(ix, typeCode, unixSec);
    if (h.entries.length > this.#cap * 3) h.entries.splice(0, h.entries.length - this.#cap * 3);
    this.#records.changed(h);
  }

  /** The device links made since the last flush; the returned function writes them (in a transaction). */
  prepareFlush(): () => void {
    const links = [...this.#newLinks];
    this.#newLinks.clear();
    return () => {
      for (const [deviceId, userId] of links) this.#store.modelState.put(linkKey(this.#env, deviceId), userId);
    };
  }

  /**
   * Once a flush is readable: drops the cached links when they are more than `max`, but those
   * made since the flush started (not stored yet).
   */
  trim(max: number): void {
    if (this.#links.size > max) {
      this.#links.clear();
      for (const [deviceId, userId] of this.#newLinks) this.#links.set(deviceId, userId);
      this.#linksMayExist = true;
    }
  }
}
