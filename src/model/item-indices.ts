/**
 * @module model/item-indices
 * The builder's memory of item indices (they never change once given), and assignment of the
 * missing ones of a chunk in one small write transaction. Invalidation: none needed; the cache
 * is only dropped when it grows past its bound.
 */
import { ensureItemIndex, saveNextIx } from '../store/item-index.ts';
import type { Store } from '../store/open.ts';

const MAX_CACHED = 2_000_000;

export class ItemIndices {
  readonly #store: Store;
  /**
   * By environment, item type and item id: map lookups on the event's own strings, no key string
   * built per event (the joined key was ~3% of a replay, issue 12).
   */
  readonly #cache = new Map<string, Map<string, Map<string, number>>>();
  #cached = 0;

  constructor(store: Store) {
    this.#store = store;
  }

  #ids(environment: string, itemType: string): Map<string, number> {
    let types = this.#cache.get(environment);
    if (!types) this.#cache.set(environment, (types = new Map()));
    let ids = types.get(itemType);
    if (!ids) types.set(itemType, (ids = new Map()));
    return ids;
  }

  #remember(ids: Map<string, number>, itemId: string, ix: number): void {
    if (this.#cached >= MAX_CACHED) {
      for (const types of this.#cache.values()) for (const m of types.values()) m.clear();
      this.#cached = 0;
    }
    ids.set(itemId, ix);
    this.#cached++;
  }

  #lookup(environment: string, itemType: string, itemId: string): number | undefined {
    const ids = this.#ids(environment, itemType);
    let ix = ids.get(itemId);
    if (ix === undefined) {
      ix = this.#store.itemIndex.get([environment, itemType, itemId]);
      if (ix !== undefined) this.#remember(ids, itemId, ix);
    }
    return ix;
  }

  /** Indices of `items` (undefined entries stay undefined), assigning missing ones. */
  resolve(environment: string, items: ReadonlyArray<readonly [string, string] | undefined>): Array<number | undefined> {
    const ixs: Array<number | undefined> = new Array(items.length);
    let missing = false;
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      ixs[i] = it ? this.#lookup(environment, it[0], it[1]) : undefined;
      if (it && ixs[i] === undefined) missing = true;
    }
    if (!missing) return ixs;
    // One read of the next free index for the chunk, not one read and one write per new item.
    const nextIx = new Map<string, number>();
    this.#store.root.transactionSync(() => {
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        if (it && ixs[i] === undefined) ixs[i] = ensureItemIndex(this.#store, environment, it[0], it[1], nextIx);
      }
      saveNextIx(this.#store, nextIx);
    });
    // Remembered once committed: a failed transaction gave none of them.
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (it && ixs[i] !== undefined) {
        const ids = this.#ids(environment, it[0]);
        if (!ids.has(it[1])) this.#remember(ids, it[1], ixs[i]!);
      }
    }
    return ixs;
  }
}
