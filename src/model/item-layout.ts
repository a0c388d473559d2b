/**
 * @module model/item-layout
 * Follows the catalog change feed into dense per-item arrays (flags, type, publication and end
 * times by item index) that the ranking kernel filters on without reading item records.
 */
import type { Config } from '../config/types.ts';
import type { StoredItem } from '../domain/item.ts';
import type { CatalogChange } from '../store/catalog.ts';
import { itemIndexCount } from '../store/item-index.ts';
import {
  ITEM_ENABLED,
  ITEM_IN_CATALOG,
  UNKNOWN_TYPE,
  bytesOf,
  copyU32,
  copyU8,
  itemLayoutKey,
} from '../store/model.ts';
import type { Store } from '../store/open.ts';

interface Layout {
  flags: Uint8Array;
  type: Uint8Array;
  published: Uint32Array;
  ends: Uint32Array;
}

function grow<T extends Uint8Array | Uint32Array>(array: T, length: number, make: (n: number) => T): T {
  if (array.length >= length) return array;
  const out = make(Math.max(length, array.length * 2, 1024));
  out.set(array);
  return out;
}

const toUnixSec = (iso: string | undefined) => (iso ? Math.max(0, Math.floor(Date.parse(iso) / 1000)) : 0);

/** Applies catalog changes, all of one environment's touched arrays written once per call. */
export function applyCatalogChanges(store: Store, environments: Config['environments'], changes: CatalogChange[]): void {
  const layouts = new Map<string, Layout>();
  for (const change of changes) {
    const env = environments[change.environment];
    if (!env) continue;
    let layout = layouts.get(change.environment);
    if (!layout) {
      const m = store.model;
      layout = {
        flags: copyU8(m.get(itemLayoutKey(change.environment, 'flags'))),
        type: copyU8(m.get(itemLayoutKey(change.environment, 'type'))),
        published: copyU32(m.get(itemLayoutKey(change.environment, 'published'))),
        ends: copyU32(m.get(itemLayoutKey(change.environment, 'ends'))),
      };
      layouts.set(change.environment, layout);
    }
    const length = Math.max(change.ix + 1, itemIndexCount(store, change.environment));
    layout.flags = grow(layout.flags, length, (n) => new Uint8Array(n));
    layout.type = grow(layout.type, length, (n) => new Uint8Array(n).fill(UNKNOWN_TYPE));
    layout.published = grow(layout.published, length, (n) => new Uint32Array(n));
    layout.ends = grow(layout.ends, length, (n) => new Uint32Array(n));
    // Read the item as it is now: later changes in the feed will be applied anyway.
    const stored = store.items.get([change.environment, change.itemType, change.itemId]) as StoredItem | undefined;
    const ix = change.ix;
    if (!stored) {
      layout.flags[ix] = 0;
      continue;
    }
    const typeIx = env.itemTypes.indexOf(stored.item.item_type);
    layout.flags[ix] = ITEM_IN_CATALOG | (stored.enabled ? ITEM_ENABLED : 0);
    layout.type[ix] = typeIx < 0 ? UNKNOWN_TYPE : typeIx;
    layout.published[ix] = toUnixSec(stored.item.publication_datetime);
    layout.ends[ix] = toUnixSec(stored.item.end_datetime);
  }
  for (const [environment, layout] of layouts) {
    store.model.put(itemLayoutKey(environment, 'flags'), bytesOf(layout.flags));
    store.model.put(itemLayoutKey(environment, 'type'), bytesOf(layout.type));
    store.model.put(itemLayoutKey(environment, 'published'), bytesOf(layout.published));
    store.model.put(itemLayoutKey(environment, 'ends'), bytesOf(layout.ends));
  }
}
