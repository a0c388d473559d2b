/**
 * @module model/item-layout
 * Follows the catalog change feed into dense per-item arrays (flags, type, publication and end
 * times by item index) that the ranking kernel filters on without reading item records, and into
 * each changed item's content vector and item view entry (what a ranking worker's catalog view
 * holds of it: store/item-view.ts). Kept in memory per environment, written when dirty at each
 * flush (vectors and entries by chunk, only the chunks of changed items: a whole-array rewrite
 * would cost megabytes per flush). At the builder's start it also makes what an earlier version
 * did not write (migrateVectors, makeItemView).
 */
import type { Config } from '../config/types.ts';
import type { StoredItem } from '../domain/item.ts';
import type { CatalogChange } from '../store/catalog.ts';
import { itemIndexCount } from '../store/item-index.ts';
import { contentVector } from '../recommend/content-vector.ts';
import { VECTOR_DIM } from '../recommend/reference-ranker.ts';
import {
  ITEM_ENABLED,
  ITEM_IN_CATALOG,
  UNKNOWN_TYPE,
  VECTOR_CHUNK_ITEMS,
  bytesOf,
  contentVectorChunkKey,
  contentVectorKey,
  copyF32,
  copyU32,
  copyU8,
  itemLayoutKey,
} from '../store/model.ts';
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


export class ItemLayoutState {
  readonly #store: Store;
  readonly #environments: Config['environments'];
  readonly #layouts = new Map<string, Layout>();
  readonly #dirty = new Set<string>();
  /** Content vectors to write (null: delete), by environment and ix. */
  readonly #vectors = new Map<string, Map<number, Float32Array | null>>();
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
      layout = {
        flags: copyU8(m.get(itemLayoutKey(environment, 'flags'))),
        type: copyU8(m.get(itemLayoutKey(environment, 'type'))),
        published: copyU32(m.get(itemLayoutKey(environment, 'published'))),
        ends: copyU32(m.get(itemLayoutKey(environment, 'ends'))),
      };
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
      layout.flags = grow(layout.flags, length, (n) => new Uint8Array(n));
      layout.type = grow(layout.type, length, (n) => new Uint8Array(n).fill(UNKNOWN_TYPE));
      layout.published = grow(layout.published, length, (n) => new Uint32Array(n));
      layout.ends = grow(layout.ends, length, (n) => new Uint32Array(n));
      this.#dirty.add(change.environment);
      // The item as it is now: any later change in the feed will be applied after this one.
      const stored = this.#store.items.get([change.environment, change.itemType, change.itemId]) as StoredItem | undefined;
      const ix = change.ix;
      let vectors = this.#vectors.get(change.environment);
      if (!vectors) this.#vectors.set(change.environment, (vectors = new Map()));
      let entries = this.#entries.get(change.environment);
      if (!entries) this.#entries.set(change.environment, (entries = new Map()));
      if (!stored) {
        layout.flags[ix] = 0;
        vectors.set(ix, null);
        entries.set(ix, null);
        continue;
      }
      const entry = itemViewEntry(stored, env, this.#infoFields.get(change.environment)!);
      entries.set(ix, entry);
      if (change.op === 'create' || change.op === 'update') vectors.set(ix, contentVector(stored.item));
      const typeIx = env.itemTypes.indexOf(entry.type);
      layout.flags[ix] = ITEM_IN_CATALOG | (entry.enabled ? ITEM_ENABLED : 0);
      layout.type[ix] = typeIx < 0 ? UNKNOWN_TYPE : typeIx;
      layout.published[ix] = entry.published;
      layout.ends[ix] = entry.ends;
    }
  }

  prepareFlush(): () => void {
    const writes: Array<[string, Layout]> = [];
    for (const environment of this.#dirty) {
      const l = this.#layouts.get(environment)!;
      writes.push([environment, { flags: l.flags.slice(), type: l.type.slice(), published: l.published.slice(), ends: l.ends.slice() }]);
    }
    this.#dirty.clear();
    const vectorWrites = [...this.#vectors].map(([environment, vectors]) => [environment, [...vectors]] as const);
    this.#vectors.clear();
    const entryWrites = [...this.#entries].map(([environment, entries]) => [environment, [...entries]] as const);
    this.#entries.clear();
    return () => {
      for (const [environment, vectors] of vectorWrites) this.#writeVectors(environment, vectors);
      for (const [environment, entries] of entryWrites) this.#writeEntries(environment, entries);
      for (const [environment, l] of writes) {
        this.#store.model.put(itemLayoutKey(environment, 'flags'), bytesOf(l.flags));
        this.#store.model.put(itemLayoutKey(environment, 'type'), bytesOf(l.type));
        this.#store.model.put(itemLayoutKey(environment, 'published'), bytesOf(l.published));
        this.#store.model.put(itemLayoutKey(environment, 'ends'), bytesOf(l.ends));
      }
    };
  }

  /** Patches the chunks of the changed vectors (read inside the write transaction, so current). */
  #writeVectors(environment: string, vectors: ReadonlyArray<readonly [number, Float32Array | null]>): void {
    const chunks = new PatchedChunks(VECTOR_CHUNK_ITEMS, (c) => readVectorChunk(this.#store, environment, c));
    for (const [ix, vector] of vectors) {
      const at = (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM;
      if (vector) chunks.of(ix).set(vector, at);
      else chunks.of(ix).fill(0, at, at + VECTOR_DIM);
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
          const vector = stored ? contentVector(stored.item) : null;
          if (vector) chunks.of(ix).set(vector, (ix % VECTOR_CHUNK_ITEMS) * VECTOR_DIM);
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
