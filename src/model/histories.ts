/**
 * @module model/histories
 * Per-user and per-device recent items, updated in memory for one chunk of events and written
 * once at its end. A device seen with a user_id is linked to that user: its history is merged
 * into the user's and later events of either go to the user's history.
 */
import type { Key } from 'lmdb';
import type { Store } from '../store/open.ts';
import { bytesOf, copyU32, deviceHistoryKey, userHistoryKey } from '../store/model.ts';

const linkKey = (env: string, deviceId: string) => [env, 'link', deviceId];

interface OpenHistory {
  key: Key;
  /** Flat (ix, event type code, unix sec) triplets, oldest first. */
  entries: number[];
  dirty: boolean;
}

export class HistoryUpdates {
  readonly #store: Store;
  readonly #env: string;
  readonly #cap: number;
  readonly #open = new Map<string, OpenHistory>();
  readonly #links = new Map<string, string>();

  constructor(store: Store, env: string, historyLength: number) {
    this.#store = store;
    this.#env = env;
    this.#cap = historyLength;
  }

  #history(key: Key): OpenHistory {
    const id = JSON.stringify(key);
    let h = this.#open.get(id);
    if (!h) {
      h = { key, entries: Array.from(copyU32(this.#store.model.get(key))), dirty: false };
      this.#open.set(id, h);
    }
    return h;
  }

  /** The user a device is linked to, if any. */
  linkedUser(deviceId: string): string | undefined {
    const cached = this.#links.get(deviceId);
    if (cached !== undefined) return cached;
    const stored = this.#store.modelState.get(linkKey(this.#env, deviceId)) as string | undefined;
    if (stored !== undefined) this.#links.set(deviceId, stored);
    return stored;
  }

  /** Links a device to a user, merging the device's history into the user's (first sight only). */
  link(deviceId: string, userId: string): void {
    if (this.linkedUser(deviceId) === userId) return;
    this.#links.set(deviceId, userId);
    this.#store.modelState.put(linkKey(this.#env, deviceId), userId);
    const device = this.#history(deviceHistoryKey(this.#env, deviceId));
    if (device.entries.length === 0) return;
    const user = this.#history(userHistoryKey(this.#env, userId));
    const merged: number[][] = [];
    for (const list of [user.entries, device.entries]) {
      for (let i = 0; i + 2 < list.length; i += 3) merged.push([list[i]!, list[i + 1]!, list[i + 2]!]);
    }
    merged.sort((a, b) => a[2]! - b[2]!);
    user.entries = merged.flat().slice(-this.#cap * 3);
    user.dirty = true;
    device.entries = [];
    device.dirty = true;
  }

  /** The history an event of this user/device belongs to. */
  keyFor(userId: string | undefined, deviceId: string | undefined): Key | undefined {
    if (userId) return userHistoryKey(this.#env, userId);
    if (!deviceId || deviceId === 'no-consent') return undefined;
    const linked = this.linkedUser(deviceId);
    return linked ? userHistoryKey(this.#env, linked) : deviceHistoryKey(this.#env, deviceId);
  }

  /** Up to `n` most recent distinct item indices of a history, newest first. */
  recentItems(key: Key, n: number, out: number[]): number[] {
    out.length = 0;
    const entries = this.#history(key).entries;
    for (let i = entries.length - 3; i >= 0 && out.length < n; i -= 3) {
      const ix = entries[i]!;
      if (!out.includes(ix)) out.push(ix);
    }
    return out;
  }

  append(key: Key, ix: number, typeCode: number, unixSec: number): void {
    const h = this.#history(key);
    h.entries.push(ix, typeCode, unixSec);
    if (h.entries.length > this.#cap * 3) h.entries.splice(0, h.entries.length - this.#cap * 3);
    h.dirty = true;
  }

  /** Writes every touched history (inside the caller's transaction). */
  flush(): void {
    for (const h of this.#open.values()) {
      if (!h.dirty) continue;
      if (h.entries.length === 0) this.#store.model.remove(h.key);
      else this.#store.model.put(h.key, bytesOf(Uint32Array.from(h.entries)));
    }
    this.#open.clear();
  }
}
