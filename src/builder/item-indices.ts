/**
 * @module builder/item-indices
 * The builder's memory of item indices (they never change once given), and assignment of the
 * missing ones of a chunk in one small write transaction. Invalidation: none needed; the cache
 * is only dropped when it grows past its bound.
 */
import { ensureItemIndex, saveNextIx } from '../store/item-index.ts';
import type { Store } from '../store/open.ts';
import { transactionSyncRetried } from '../store/commit.ts';

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

  /**
   * Indices of the items named by `types[i]` and `ids[i]` (no type: no item, undefined), assigning
   * missing ones. Parallel arrays, not a tuple per event (issue 12: the builder's allocation).
   */
  resolve(environment: string, types: ReadonlyArray<string | undefined>, ids: readonly string[]): Array<number | undefined> {
    const ixs: Array<number | undefined> = new Array(types.length);
    /** Positions of the items without an index: after a miss only they are visited again, not the chunk. */
    const missing: number[] = [];
    for (let i = 0; i < types.length; i++) {
      const type = types[i];
      ixs[i] = type === undefined ? undefined : this.#lookup(environment, type, ids[i]!);
      if (type !== undefined && ixs[i] === undefined) missing.push(i);
    }
    if (missing.length === 0) return ixs;
    // One read of the next free index for the chunk, not one read and one write per new item.
    transactionSyncRetried(this.#store.root, () => {
      // Inside: a retried transaction must read the counters again, not reuse the aborted try's.
      const nextIx = new Map<string, number>();
      for (const i of missing) ixs[i] = ensureItemIndex(this.#store, environment, types[i]!, ids[i]!, nextIx);
      saveNextIx(this.#store, nextIx);
    });
    // Remembered once committed: a failed transaction gave none of them. (Found ones were remembered by #lookup.)
    for (const i of missing) {
      const known = this.#ids(environment, types[i]!);
      if (!known.has(ids[i]!)) this.#remember(known, ids[i]!, ixs[i]!);
    }
    return ixs;
  }
}
