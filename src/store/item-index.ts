/**
 * @module store/item-index
 * Dense per-environment item indices: the kernel's integer names for items. An index is given
 * the first time an item is seen (by the catalog or by an event about it) and never reused.
 */
import type { Store } from './open.ts';

/**
 * The item's index, assigning the next free one if it has none. Call inside a write transaction.
 * `nextIx`, when given, caches each environment's next free index across many calls of one
 * transaction; the caller writes it back with saveNextIx before the transaction ends.
 */
export function ensureItemIndex(store: Store, environment: string, itemType: string, itemId: string, nextIx?: Map<string, number>): number {
  const key = [environment, itemType, itemId];
  const known = store.itemIndex.get(key);
  if (known !== undefined) return known;
  let ix = nextIx?.get(environment);
  if (ix === undefined) ix = store.meta.get(['nextIx', environment]) ?? 0;
  if (nextIx) nextIx.set(environment, ix + 1);
  else store.meta.put(['nextIx', environment], ix + 1);
  store.itemIndex.put(key, ix);
  store.indexItems.put([environment, ix], [itemType, itemId]);
  return ix;
}

/** Writes the next free indices cached by ensureItemIndex calls (same transaction). */
export function saveNextIx(store: Store, nextIx: ReadonlyMap<string, number>): void {
  for (const [environment, ix] of nextIx) store.meta.put(['nextIx', environment], ix);
}

/** How many indices the environment has handed out (the length of its dense arrays). */
export function itemIndexCount(store: Store, environment: string): number {
  return store.meta.get(['nextIx', environment]) ?? 0;
}
