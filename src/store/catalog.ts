/**
 * @module store/catalog
 * The item catalog on LMDB: create-or-update, enable/disable, delete, read, list, and the change
 * feed that feed ingestion and the model builder follow. Every write commits the item, its index
 * and its change record in one transaction. Validation is the caller's job; this module trusts
 * its input.
 */
import type { Item, StoredItem } from '../domain/item.ts';
import { ensureItemIndex } from './item-index.ts';
import type { Store } from './open.ts';

export type CatalogOp = 'create' | 'update' | 'enable' | 'disable' | 'delete';

/** One record of the change feed. */
export interface CatalogChange {
  seq: number;
  environment: string;
  itemType: string;
  itemId: string;
  ix: number;
  op: CatalogOp;
  /** Unix ms of the commit request. */
  at: number;
}

const CHANGE_SEQ = 'changeSeq';

/**
 * LMDB keys hold at most 1978 bytes, and lmdb-js throws past that. Item ids and types are
 * validated far shorter before they are stored, so identifiers that would not fit a key name no
 * item: lookups answer "absent" for them instead of throwing (a path segment or cursor of any
 * length reaches here).
 */
const MAX_ITEM_ID_BYTES = 1024; // 256 code points of up to 4 bytes (http/schemas/item.ts)
const MAX_ITEM_TYPE_BYTES = 256; // configured type names are far shorter

function fits(part: string, maxBytes: number): boolean {
  return part.length <= maxBytes && Buffer.byteLength(part) <= maxBytes;
}

/** Whether `itemId` could be the id of a stored item (for validating cursors). */
export function couldBeItemId(itemId: string): boolean {
  return fits(itemId, MAX_ITEM_ID_BYTES);
}

function couldBeKey(itemType: string, itemId: string): boolean {
  return fits(itemType, MAX_ITEM_TYPE_BYTES) && fits(itemId, MAX_ITEM_ID_BYTES);
}

/** Highest string element for range ends: sorts after every item id. */
const KEY_END = '\uffff';

export class Catalog {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The stored item, or undefined when unknown or deleted. */
  get(environment: string, itemType: string, itemId: string): StoredItem | undefined {
    if (!couldBeKey(itemType, itemId)) return undefined;
    return this.#store.items.get([environment, itemType, itemId]) as StoredItem | undefined;
  }

  /** Creates or replaces an item, keeping its enabled state. Resolves once committed. */
  put(item: Item): Promise<'create' | 'update'> {
    const s = this.#store;
    const key = [item.environment, item.item_type, item.item_id];
    return s.root.transaction(() => {
      const existing = s.items.get(key) as StoredItem | undefined;
      const ix = existing?.ix ?? ensureItemIndex(s, item.environment, item.item_type, item.item_id);
      const stored: StoredItem = { item, enabled: existing?.enabled ?? true, ix, updatedAt: Date.now() };
      s.items.put(key, stored);
      const op = existing ? 'update' : 'create';
      this.#appendChange(item.environment, item.item_type, item.item_id, ix, op);
      return op;
    });
  }

  /** Sets the enabled state; resolves false when the item is unknown. */
  setEnabled(environment: string, itemType: string, itemId: string, enabled: boolean): Promise<boolean> {
    if (!couldBeKey(itemType, itemId)) return Promise.resolve(false);
    const s = this.#store;
    const key = [environment, itemType, itemId];
    return s.root.transaction(() => {
      const existing = s.items.get(key) as StoredItem | undefined;
      if (!existing) return false;
      if (existing.enabled !== enabled) {
        s.items.put(key, { ...existing, enabled, updatedAt: Date.now() });
        this.#appendChange(environment, itemType, itemId, existing.ix, enabled ? 'enable' : 'disable');
      }
      return true;
    });
  }

  /** Removes the item's metadata (DESIGN.md: GET then answers 404; its index and events stay). */
  remove(environment: string, itemType: string, itemId: string): Promise<boolean> {
    if (!couldBeKey(itemType, itemId)) return Promise.resolve(false);
    const s = this.#store;
    const key = [environment, itemType, itemId];
    return s.root.transaction(() => {
      const existing = s.items.get(key) as StoredItem | undefined;
      if (!existing) return false;
      s.items.remove(key);
      this.#appendChange(environment, itemType, itemId, existing.ix, 'delete');
      return true;
    });
  }

  /** Up to `limit` item ids of a type in id order, starting after `afterId`. */
  listIds(
    environment: string,
    itemType: string,
    afterId: string | undefined,
    limit: number,
  ): { items: Array<{ itemId: string; enabled: boolean }>; more: boolean } {
    const items: Array<{ itemId: string; enabled: boolean }> = [];
    const range = this.#store.items.getRange({
      start: [environment, itemType, afterId ?? ''],
      end: [environment, itemType, KEY_END],
    });
    let more = false;
    for (const { key, value } of range) {
      const itemId = (key as [string, string, string])[2];
      if (afterId !== undefined && itemId === afterId) continue;
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push({ itemId, enabled: (value as StoredItem).enabled });
    }
    return { items, more };
  }

  /** Change records with seq > `afterSeq`, oldest first, at most `limit`. */
  changesSince(afterSeq: number, limit: number): CatalogChange[] {
    const out: CatalogChange[] = [];
    for (const { value } of this.#store.changes.getRange({ start: afterSeq + 1, limit })) {
      out.push(value as CatalogChange);
    }
    return out;
  }

  #appendChange(environment: string, itemType: string, itemId: string, ix: number, op: CatalogOp): void {
    const s = this.#store;
    const seq = (s.meta.get(CHANGE_SEQ) ?? 0) + 1;
    s.meta.put(CHANGE_SEQ, seq);
    const change: CatalogChange = { seq, environment, itemType, itemId, ix, op, at: Date.now() };
    s.changes.put(seq, change);
  }
}
