/**
 * @module model/item-indices
 * The builder's memory of item indices (they never change once given), and assignment of the
 * missing ones of a chunk in one small write transaction. Invalidation: none needed; the cache
 * is only dropped when it grows past its bound.
 */
import { ensureItemIndex } from '../store/item-index.ts';
import type { Store } from '../store/open.ts';

const MAX_CACHED = 2_000_000;

export class ItemIndices {
  readonly #store: Store;
  readonly #cache = new Map<string, number>();

  constructor(store: Store) {
    this.#store = store;
  }

  #lookup(environment: string, itemType: string, itemId: string): number | undefined {
    const id = `${environment}\u0000${itemType}\u0000${itemId}`;
    let ix = this.#cache.get(id);
    if (ix === undefined) {
      ix = this.#store.itemIndex.get([environment, itemType, itemId]);
      if (ix !== undefined) {
        if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
        this.#cache.set(id, ix);
      }
    }
    return ix;
  }

  /** Indices of `items` (undefined entries stay undefined), assigning missing ones. */
  resolve(environment: string, items: ReadonlyArray<readonly [string, string] | undefined>): Array<number | undefined> {
    const ixs = items.map((it) => (it ? this.#lookup(environment, it[0], it[1]) : undefined));
    const missing: Array<readonly [string, string]> = [];
    for (let i = 0; i < items.length; i++) if (items[i] && ixs[i] === undefined) missing.push(items[i]!);
    if (missing.length === 0) return ixs;
    this.#store.root.transactionSync(() => {
      for (const [itemType, itemId] of missing) ensureItemIndex(this.#store, environment, itemType, itemId);
    });
    return items.map((it, i) => ixs[i] ?? (it ? this.#lookup(environment, it[0], it[1]) : undefined));
  }
}
