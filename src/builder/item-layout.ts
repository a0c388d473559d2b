/**
 * @module builder/item-layout
 * Follows the catalog change feed into a dense per-item flags array (in catalog, enabled: what
 * the reports' coverage counts), and into each changed item's content vector and item view entry
 * (what a ranking worker's catalog view holds of it: store/item-view.ts). Kept in memory per
 * environment, written when dirty at each flush (vectors and entries by chunk, only the chunks of
 * changed items: a whole-array rewrite would cost megabytes per flush). The type, publication and
 * end arrays written beside the flags until the seventeenth session were read by nothing but
 * tests (the ranking workers take them from the item view records); whole 4 MB arrays at
 * 1,000,000 items, copied and rewritten at every layout flush of a file drop's catch-up, they are
 * gone, and a store's old records of them are removed by the next layout write. At the builder's
 * start it also makes what an earlier version did not write (migrateVectors, makeItemView).
 */
import type { Config } from '../config/types.ts';
import { grown } from '../domain/grown.ts';
import type { Item, StoredItem } from '../domain/item.ts';
import type { CatalogChange } from '../store/catalog.ts';
import { itemIndexCount } from '../store/item-index.ts';
import { writeContentVector } from '../ranker/content-vector.ts';
import { VECTOR_DIM } from '../ranker/reference-ranker.ts';
import {
  ITEM_ENABLED,
  ITEM_IN_CATALOG,
  VECTOR_CHUNK_ITEMS,
  bytesOf,
  contentVectorChunkKey,
  contentVectorKey,
  copyF32,
  copyU8,
  itemLayoutKey,
} from '../store/model-layout.ts';
import type { Key } from 'lmdb';
import type { Store } from '../store/open.ts';
import { transactionSyncRetried } from '../store/commit.ts';
import {
  ITEM_VIEW_CHUNK_ITEMS,
  decodeChunk,
  encodeChunk,
  infoFieldsOf,
  itemViewChunkKey,
  itemViewEntry,
  itemViewFingerprint,
  itemViewFingerprintKey,
  itemViewProgressKey,
  type ItemViewEntry,
  type StoredChunk,
} from '../store/item-view.ts';

/** Item view records per write transaction while making them all (makeItemView). */
const BACKFILL_CHUNKS = 4096;
/** Items per transaction while moving vectors into chunks (migrateVectors); a multiple of VECTOR_CHUNK_ITEMS. */
const MIGRATE_ITEMS = 65_536;

interface Layout {
  flags: Uint8Array;
}

/** A pending vector's slot when the item has none to write (deleted). */
const NO_VECTOR = -1;

/**
 * Changed items' content vectors until the flush writes them: one slot of VECTOR_DIM floats per
 * item in one growing arena (a Float32Array per item was most of the builder's garbage in a
 * 1,000,000-row file drop), by ix; a later change of the same item reuses its slot.
 */
class PendingVectors {
  /** By ix: its slot in the arena, or NO_VECTOR. */
  readonly slots = new Map<number, number>();
  #arena = new Float32Array(64 * VECTOR_DIM);
  #used = 0;

  /** Computes the item's vector into ix's slot (given one first: the arena may grow, so never a reference to it taken before). */
  write(ix: number, item: Item): void {
    let slot = this.slots.get(ix);
    if (slot === undefined || slot === NO_VECTOR) {
      if ((this.#used + 1) * VECTOR_DIM > this.#arena.length) this.#arena = grown(this.#arena, this.#arena.length * 2);
      this.slots.set(ix, (slot = this.#used++));
    }
    writeContentVector(item, this.#arena, slot * VECTOR_DIM);
  }

  remove(ix: number): void {
    this.slots.set(ix, NO_VECTOR);
  }

  /** The vector in `slot` (a view of the arena). */
  vector(slot: number): Float32Array {
    return this.#arena.subarray(slot * VECTOR_DIM, (slot + 1) * VECTOR_DIM);
  }
}

/** Arrays an earlier version wrote beside the flags and nothing reads (removed by every layout write). */
const VESTIGE_ARRAYS = ['type', 'published', 'ends'] as const;


export class ItemLayoutState {
  readonly #store: Store;
  readonly #environments: Config['environments'];
  readonly #layouts = new Map<string, Layout>();
  readonly #dirty = new Set<string>();
  /** Content vectors to write, by environment and ix (PendingVectors). */
  readonly #vectors = new Map<string, PendingVectors>();
  /** Item view entries to write (null: none), by environment and ix (store/item-view.ts). */
  readonly #entries = new Map<string, Map<number, ItemViewEntry | null>>();
  readonly #infoFields = new Map<string, string[]>();

  constructor(store: Store, environments: Config['environments']) {
    this.#store = store;
    this.#environments = environments;
    for (const [name, config] of Object.entries(environments)) this.#infoFields.set(name, infoFieldsOf(config));
  }

  #layout(environment: string): Layout {
    let layout = this.#layouts.get(environment);
    if (!layout) {
      const m = this.#store.model;
      layout = { flags: copyU8(m.get(itemLayoutKey(environment, 'flags'))) };
      this.#layouts.set(environment, layout);
    }
    return layout;
  }

  /** Changed items whose vectors and item view entries wait for the next flush. */
  get pending(): number {
    let n = 0;
    for (const entries of this.#entries.values()) n += entries.size;
    return n;
  }

  apply(changes: readonly CatalogChange[]): void {
    // Indices handed out so far, read once per environment: arrays also cover event-made indices.
    const indexCounts = new Map<string, number>();
    for (const change of changes) {
      const env = Object.hasOwn(this.#environments, change.environment) ? this.#environments[change.environment] : undefined;
      if (!env) continue;
      const layout = this.#layout(change.environment);
      let count = indexCounts.get(change.environment);
      if (count === undefined) {
        count = itemIndexCount(this.#store, change.environment);
        indexCounts.set(change.environment, count);
      }
      const length = Math.max(change.ix + 1, count);
      if (layout.flags.length < length) layout.flags = grown(layout.flags, Math.max(length, layout.flags.length * 2, 1024));
      this.#dirty.add(change.environment);
      // The item as it is now: any later change in the feed will be applied after this one.
      const stored = this.#store.items.get([change.environment, change.itemType, change.itemId]) as StoredItem | undefined;
      const ix = change.ix;
      let vectors = this.#vectors.get(change.environment);
      if (!vectors) this.#vectors.set(change.environment, (vectors = new PendingVectors()));
      let entries = this.#entries.get(change.environment);
      if (!entries) this.#entries.set(change.environment, (entries = new Map()));
      if (!stored) {
        layout.flags[ix] = 0;
        vectors.remove(ix);
        entries.set(ix, null);
        continue;
      }
      const entry = itemViewEntry(stored, env, this.#infoFields.get(change.environment)!);
      entries.set(ix, entry);
      if (change.op === 'create' || change.op === 'update') vectors.write(ix, stored.item);
      layout.flags[ix] = ITEM_IN_CATALOG | (entry.enabled ? ITEM_ENABLED : 0);
    }
  }

  prepareFlush(): () => void {
    const writes: Array<[string, Uint8Array]> = [];
    for (const environment of this.#dirty) writes.push([environment, this.#layouts.get(environment)!.flags.slice()]);
    this.#dirty.clear();
    // The arenas are handed over whole: the next changes get new ones.
    const vectorWrites = [...this.#vectors];
    this.#vectors.clear();
    const entryWrites = [...this.#entries].map(([environment, entries]) => [environment, [...entries]] as const);
    this.#entries.clear();
    return () => {
      for (const [environment, vectors] of vectorWrites) this.#writeVectors(environment, vectors);
      for (const [environment, entries] of entryWrites) this.#writeEntries(environment, entries);
      for (const [environment, flags] of writes) {
        this.#store.model.put(itemLayoutKey(environment, 'flags'), bytesOf(flags));
        // A lookup each once gone: cheaper than remembering, and right after a retried transaction.
        for (const name of VESTIGE_ARRAYS) this.#store.model.remove(itemLayoutKey(environment, name));
      }
    };
  }

  /** Patches the chunks of the changed vectors (read inside the write transaction, so current). */
  #writeVectors(environment: string, vectors: PendingVectors): void {
    const chunks = new PatchedChunks(VECTOR_CHUNK_ITEMS, (c) => readVectorChunk(this.#store, environment, c));
    for (const [ix, slot] of vectors.slots) {
      const at = (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM;
      // Zeros in the chunk: no vector (a deleted item, or one without content features).
      if (slot === NO_VECTOR) chunks.of(ix).fill(0, at, at + VECTOR_DIM);
      else chunks.of(ix).set(vectors.vector(slot), at);
    }
    for (const [c, chunk] of chunks.read) writeVectorChunk(this.#store, environment, c, chunk);
  }

  /** Patches the item view records of the changed items, as #writeVectors does. */
  #writeEntries(environment: string, entries: ReadonlyArray<readonly [number, ItemViewEntry | null]>): void {
    const state = this.#store.modelState;
    const chunks = new PatchedChunks(ITEM_VIEW_CHUNK_ITEMS, (c) => decodeChunk(state.get(itemViewChunkKey(environment, c))));
    for (const [ix, entry] of entries) chunks.of(ix)[ix % ITEM_VIEW_CHUNK_ITEMS] = entry;
    for (const [c, chunk] of chunks.read) {
      const stored = encodeChunk(chunk);
      if (stored) state.put(itemViewChunkKey(environment, c), stored);
      else state.remove(itemViewChunkKey(environment, c));
    }
  }

  /**
   * Makes the item view records of every item (store/item-view.ts) where they were not made with
   * the configuration's fingerprint: a data folder of an earlier version, or filter attributes
   * or information fields changed. Reads the items in ix order and writes BACKFILL_CHUNKS records
   * per transaction with how far it got, so a stop midway loses at most a batch and the next
   * start goes on from there; the fingerprint last. Ranking workers scan the items until then.
   * A no-op (one read) once done.
   */
  makeItemView(): void {
    const state = this.#store.modelState;
    for (const [environment, config] of Object.entries(this.#environments)) {
      const fingerprint = itemViewFingerprint(config);
      const fingerprintKey = itemViewFingerprintKey(environment);
      if (state.get(fingerprintKey) === fingerprint) continue;
      const progressKey = itemViewProgressKey(environment);
      const progress = state.get(progressKey) as { fingerprint: string; next: number } | undefined;
      let next = progress?.fingerprint === fingerprint ? progress.next : 0;
      if (next === 0) {
        const stale = [...state.getKeys({ start: itemViewChunkKey(environment, 0), end: itemViewChunkKey(environment, 0xffffffff) })];
        transactionSyncRetried(state, () => {
          for (const key of stale) state.remove(key);
          state.remove(fingerprintKey);
        });
      }
      const infoFields = this.#infoFields.get(environment)!;
      let pending: Array<[number, StoredChunk]> = [];
      /** Writes the pending records with how far it got, or, `done`, with the fingerprint instead. */
      const write = (done = false) => {
        const batch = pending;
        pending = [];
        transactionSyncRetried(state, () => {
          for (const [c, chunk] of batch) state.put(itemViewChunkKey(environment, c), chunk);
          if (!done) return void state.put(progressKey, { fingerprint, next });
          state.remove(progressKey);
          state.put(fingerprintKey, fingerprint);
        });
      };
      // Every ix handed out, in order (deleted items keep theirs): a chunk's items come together.
      let chunk = -1;
      let entries: Array<ItemViewEntry | null> = [];
      const endChunk = () => {
        if (chunk < 0) return;
        const stored = encodeChunk(entries);
        if (stored) pending.push([chunk, stored]);
        next = (chunk + 1) * ITEM_VIEW_CHUNK_ITEMS;
        if (pending.length >= BACKFILL_CHUNKS) write();
      };
      for (const { key, value } of this.#store.indexItems.getRange({ start: [environment, next], end: [environment, 0xffffffff] })) {
        const ix = (key as [string, number])[1];
        if (Math.floor(ix / ITEM_VIEW_CHUNK_ITEMS) !== chunk) {
          endChunk();
          chunk = Math.floor(ix / ITEM_VIEW_CHUNK_ITEMS);
          entries = new Array<ItemViewEntry | null>(ITEM_VIEW_CHUNK_ITEMS).fill(null);
        }
        const stored = this.#store.items.get([environment, value[0], value[1]]) as StoredItem | undefined;
        entries[ix % ITEM_VIEW_CHUNK_ITEMS] = stored ? itemViewEntry(stored, config, infoFields) : null;
      }
      endChunk();
      write(true);
    }
  }

  /**
   * Moves vectors saved one record per item (before the chunks) into chunks. An item in the
   * catalog without a record gets its vector computed, as a ranking worker would have; a chunk
   * then covers every item in it (one that is absent still means "compute it"). By ranges of
   * MIGRATE_ITEMS ix, one transaction each: a stop midway loses at most a range, and the next
   * start goes on from the records left. A no-op (one seek) once done.
   */
  migrateVectors(): void {
    const model = this.#store.model;
    for (const environment of Object.keys(this.#environments)) {
      const range = { start: contentVectorKey(environment, 0), end: contentVectorKey(environment, 0xffffffff) };
      const first = [...model.getKeys({ ...range, limit: 1 })][0] as [string, string, number] | undefined;
      if (!first) continue;
      const last = [...model.getKeys({ start: range.end, end: range.start, limit: 1, reverse: true })][0] as [string, string, number];
      const flags = this.#layout(environment).flags;
      const end = Math.max(flags.length, last[2] + 1);
      for (let from = first[2] - (first[2] % VECTOR_CHUNK_ITEMS); from < end; from += MIGRATE_ITEMS) {
        const to = Math.min(end, from + MIGRATE_ITEMS);
        const chunks = new PatchedChunks(VECTOR_CHUNK_ITEMS, (c) => readVectorChunk(this.#store, environment, c));
        const legacy: Key[] = [];
        const saved = new Set<number>();
        for (const { key, value } of model.getRange({ start: contentVectorKey(environment, from), end: contentVectorKey(environment, to) })) {
          legacy.push(key);
          const ix = (key as [string, string, number])[2];
          if (value.byteLength !== VECTOR_DIM * 4) continue;
          new Uint8Array(chunks.of(ix).buffer).set(value, (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM * 4);
          saved.add(ix);
        }
        for (let ix = from; ix < Math.min(to, flags.length); ix++) {
          if (!(flags[ix]! & ITEM_IN_CATALOG) || saved.has(ix)) continue;
          const id = this.#store.indexItems.get([environment, ix]);
          const stored = id && (this.#store.items.get([environment, id[0], id[1]]) as StoredItem | undefined);
          if (stored) writeContentVector(stored.item, chunks.of(ix), (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM);
        }
        transactionSyncRetried(this.#store.modelRoot, () => {
          for (const [c, chunk] of chunks.read) writeVectorChunk(this.#store, environment, c, chunk);
          for (const key of legacy) model.remove(key);
        });
      }
    }
  }
}

/** The chunks some ix fall in, each loaded once and then patched in memory (`read`: by chunk number). */
class PatchedChunks<T> {
  readonly read = new Map<number, T>();
  readonly #itemsPerChunk: number;
  readonly #load: (chunk: number) => T;

  constructor(itemsPerChunk: number, load: (chunk: number) => T) {
    this.#itemsPerChunk = itemsPerChunk;
    this.#load = load;
  }

  of(ix: number): T {
    const c = Math.floor(ix / this.#itemsPerChunk);
    let chunk = this.read.get(c);
    if (chunk === undefined) this.read.set(c, (chunk = this.#load(c)));
    return chunk;
  }
}

/** A stored chunk's vectors (a copy), or zeros for one absent or of another size. */
function readVectorChunk(store: Store, environment: string, chunk: number): Float32Array {
  const stored = copyF32(store.model.get(contentVectorChunkKey(environment, chunk)));
  return stored.length === VECTOR_CHUNK_ITEMS * VECTOR_DIM ? stored : new Float32Array(VECTOR_CHUNK_ITEMS * VECTOR_DIM);
}

/** A chunk of zeros (no item in it has a vector) is removed: absent reads as not saved, then computed as none. */
function writeVectorChunk(store: Store, environment: string, chunk: number, vectors: Float32Array): void {
  const key = contentVectorChunkKey(environment, chunk);
  if (vectors.some((v) => v !== 0)) store.model.put(key, bytesOf(vectors));
  else store.model.remove(key);
}
