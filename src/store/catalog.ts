/**
 * @module store/catalog
 * The item catalog on LMDB: create-or-update, enable/disable, delete, read, list, and the change
 * feed that feed ingestion and the model builder follow. Every write commits the item, its index
 * and its change record in one transaction. Validation is the caller's job; this module trusts
 * its input.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Item, StoredItem } from '../domain/item.ts';
import { ensureItemIndex, saveNextIx } from './item-index.ts';
import { signalStoreChange } from './change-signal.ts';
import type { Store } from './open.ts';
import { transactionRetried } from './commit.ts';

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

/**
 * One write of a batch (Catalog.applyBatch). `put` creates or replaces an item (setting its
 * enabled state when given, else keeping it); `patch` replaces an existing item by what `patch`
 * makes of it (an Item, or the reason it refuses); `remove` deletes.
 */
export type CatalogWrite =
  | { op: 'put'; item: Item; enabled?: boolean }
  | { op: 'patch'; environment: string; itemType: string; itemId: string; patch: (existing: Item) => Item | string }
  | { op: 'remove'; environment: string; itemType: string; itemId: string };

/** What one write of a batch did; `state` is set when it also changed the enabled state. */
export interface WriteResult {
  op: 'create' | 'update' | 'unchanged' | 'delete' | 'rejected';
  state?: 'enable' | 'disable';
  reason?: string;
}

const CHANGE_SEQ = 'changeSeq';

/** Counters of one applyBatch transaction. */
interface BatchCounters {
  seq: number;
  nextIx: Map<string, number>;
}

/**
 * LMDB keys hold at most 1978 bytes, and lmdb-js throws past that. Item ids and types are
 * validated far shorter before they are stored, so identifiers that would not fit a key name no
 * item: lookups answer "absent" for them instead of throwing (a path segment or cursor of any
 * length reaches here).
 */
const MAX_ITEM_ID_BYTES = 1024; // 256 code points of up to 4 bytes (domain/item-schema.ts)
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

/** A put waiting in a batch; `op` is set by the batch's transaction. */
interface QueuedPut {
  item: Item;
  resolve(op: 'create' | 'update'): void;
  reject(err: unknown): void;
  op: 'create' | 'update';
}

export class Catalog {
  readonly #store: Store;
  /** The put batch still taking puts: its transaction is queued and has not run yet. */
  #openPuts: QueuedPut[] | undefined;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The stored item, or undefined when unknown or deleted. */
  get(environment: string, itemType: string, itemId: string): StoredItem | undefined {
    if (!couldBeKey(itemType, itemId)) return undefined;
    return this.#store.items.get([environment, itemType, itemId]) as StoredItem | undefined;
  }

  /**
   * Creates or replaces an item, keeping its enabled state. Resolves once committed. Puts are
   * group-committed: every put made before the write thread reaches the open batch's transaction
   * (while the previous commit is in flight) shares that transaction, so under concurrent PUTs one
   * commit and one read of the counters serve many requests. Other writes close the open batch, so
   * a put made after them commits after them. A batch commits whole or not at all: a put that
   * throws (a storage fault: input was validated before) fails every put of its batch, rather
   * than commit the half it wrote. The transaction callback runs after put() returns (lmdb-js
   * queues it), so the batch is open to the puts of the same turn.
   */
  put(item: Item): Promise<'create' | 'update'> {
    return new Promise((resolve, reject) => {
      let batch = this.#openPuts;
      if (!batch) {
        const opened: QueuedPut[] = [];
        this.#commit(() => this.#putAll(opened)).then(
          () => {
            for (let i = 0; i < opened.length; i++) opened[i]!.resolve(opened[i]!.op);
          },
          (err: unknown) => {
            for (let i = 0; i < opened.length; i++) opened[i]!.reject(err);
          },
        );
        this.#openPuts = batch = opened;
      }
      batch.push({ item, resolve, reject, op: 'create' });
    });
  }

  /** The transaction of one put batch: put's semantics per item, counters read and written once. */
  #putAll(batch: QueuedPut[]): void {
    if (this.#openPuts === batch) this.#openPuts = undefined;
    const s = this.#store;
    const counters: BatchCounters = { seq: s.meta.get(CHANGE_SEQ) ?? 0, nextIx: new Map() };
    const now = Date.now();
    for (let i = 0; i < batch.length; i++) {
      const queued = batch[i]!;
      const item = queued.item;
      const key = [item.environment, item.item_type, item.item_id];
      const existing = s.items.get(key) as StoredItem | undefined;
      const ix = existing?.ix ?? ensureItemIndex(s, item.environment, item.item_type, item.item_id, counters.nextIx);
      s.items.put(key, { item, enabled: existing?.enabled ?? true, ix, updatedAt: now } satisfies StoredItem);
      queued.op = existing ? 'update' : 'create';
      this.#batchChange(counters, item.environment, item.item_type, item.item_id, ix, queued.op, now);
    }
    s.meta.put(CHANGE_SEQ, counters.seq);
    saveNextIx(s, counters.nextIx);
  }

  /** Sets the enabled state; resolves false when the item is unknown. */
  setEnabled(environment: string, itemType: string, itemId: string, enabled: boolean): Promise<boolean> {
    if (!couldBeKey(itemType, itemId)) return Promise.resolve(false);
    const s = this.#store;
    const key = [environment, itemType, itemId];
    return this.#commit(() => {
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
    return this.#commit(() => {
      const existing = s.items.get(key) as StoredItem | undefined;
      if (!existing) return false;
      s.items.remove(key);
      this.#appendChange(environment, itemType, itemId, existing.ix, 'delete');
      return true;
    });
  }

  /**
   * Applies `writes` in order in ONE transaction, with the per-item semantics of put/setEnabled/
   * remove and one change record per effect, except that a put or patch leaving the item exactly
   * as stored writes nothing (`unchanged`: feeds re-publish whole catalogs every poll). A later
   * write sees the earlier ones. `alsoInTransaction` runs in the same transaction after the
   * writes, so a caller can commit its own progress atomically with them (file drops: nothing
   * applied twice or lost across a crash). Resolves once committed. An unknown item is a
   * `rejected` result for patch and remove, not an error.
   */
  applyBatch(writes: readonly CatalogWrite[], alsoInTransaction?: (results: WriteResult[]) => void): Promise<WriteResult[]> {
    const s = this.#store;
    return this.#commit(() => {
      // Counters read once and written once per batch (the same values as per-write updates).
      const batch: BatchCounters = { seq: s.meta.get(CHANGE_SEQ) ?? 0, nextIx: new Map() };
      const results: WriteResult[] = [];
      for (const write of writes) {
        if (write.op === 'put') {
          results.push(this.#putInTransaction(write.item, write.enabled, batch));
          continue;
        }
        const { environment, itemType, itemId } = write;
        const existing = couldBeKey(itemType, itemId) ? (s.items.get([environment, itemType, itemId]) as StoredItem | undefined) : undefined;
        if (!existing) {
          results.push({ op: 'rejected', reason: `item '${itemId}' of type '${itemType}' is not known` });
          continue;
        }
        if (write.op === 'remove') {
          s.items.remove([environment, itemType, itemId]);
          this.#batchChange(batch, environment, itemType, itemId, existing.ix, 'delete');
          results.push({ op: 'delete' });
          continue;
        }
        const patched = write.patch(existing.item);
        results.push(typeof patched === 'string' ? { op: 'rejected', reason: patched } : this.#putInTransaction(patched, undefined, batch));
      }
      s.meta.put(CHANGE_SEQ, batch.seq);
      saveNextIx(s, batch.nextIx);
      alsoInTransaction?.(results);
      return results;
    });
  }

  #batchChange(batch: BatchCounters, environment: string, itemType: string, itemId: string, ix: number, op: CatalogOp, at = Date.now()): void {
    const seq = ++batch.seq;
    const change: CatalogChange = { seq, environment, itemType, itemId, ix, op, at };
    this.#store.changes.put(seq, change);
  }

  #putInTransaction(item: Item, enabled: boolean | undefined, batch: BatchCounters): WriteResult {
    const s = this.#store;
    const key = [item.environment, item.item_type, item.item_id];
    const existing = s.items.get(key) as StoredItem | undefined;
    const nextEnabled = enabled ?? existing?.enabled ?? true;
    const sameItem = existing !== undefined && isDeepStrictEqual(existing.item, item);
    if (sameItem && existing.enabled === nextEnabled) return { op: 'unchanged' };
    const ix = existing?.ix ?? ensureItemIndex(s, item.environment, item.item_type, item.item_id, batch.nextIx);
    s.items.put(key, { item, enabled: nextEnabled, ix, updatedAt: Date.now() } satisfies StoredItem);
    const result: WriteResult = { op: existing ? (sameItem ? 'unchanged' : 'update') : 'create' };
    if (result.op !== 'unchanged') this.#batchChange(batch, item.environment, item.item_type, item.item_id, ix, result.op as CatalogOp);
    // A new item is enabled unless told otherwise: only a disabled one has a state change to record.
    if (existing ? existing.enabled !== nextEnabled : !nextEnabled) {
      result.state = nextEnabled ? 'enable' : 'disable';
      this.#batchChange(batch, item.environment, item.item_type, item.item_id, ix, result.state);
    }
    return result;
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
  /** Runs `write` in a transaction; once committed, wakes the model builder. */
  #commit<T>(write: () => T): Promise<T> {
    // A put made after this write must not join a batch queued before it (it would commit first).
    this.#openPuts = undefined;
    return transactionRetried(this.#store.root, write).then((result) => {
      signalStoreChange();
      return result;
    });
  }

  /** Sequence number of the newest change (0 when none): one counter read. */
  lastChangeSeq(): number {
    return (this.#store.meta.get(CHANGE_SEQ) as number | undefined) ?? 0;
  }

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
