/**
 * @module serving/catalog-view
 * A ranking worker's view of one environment's catalog: the kernel's resident item arrays, the
 * ids and information fields of items by ix, the filter index (one bitset per filter key) and
 * the `latest` list. Built once from the catalog, then kept current from the change feed before
 * every batch, so an item PUT (or disable, or delete) answered 200 counts in the next request
 * (DESIGN.md invariant 2) without waiting for the model builder. Content vectors are read from
 * the builder's LMDB copy when it has one, else computed (the same pure function); the engine
 * replays the change feed from the builder's position so no copy is older than its item.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import type { StoredItem } from '../domain/item.ts';
import { CATEGORY_KEY_PREFIX, TAG_KEY_PREFIX, filterClauses, filterItemTypes } from '../domain/list-filters.ts';
import type { CatalogChange } from '../store/catalog.ts';
import { itemIndexCount } from '../store/item-index.ts';
import {
  ITEM_ENABLED as ENABLED,
  ITEM_IN_CATALOG as IN_CATALOG,
  UNKNOWN_TYPE as UNKNOWN,
  VECTOR_CHUNK_ITEMS,
  contentVectorChunkKey,
  contentVectorKey,
} from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import {
  ITEM_VIEW_CHUNK_ITEMS,
  infoFieldsOf,
  isStoredChunk,
  isStoredEntry,
  itemViewChunkKey,
  itemViewEntry,
  itemViewFingerprint,
  itemViewFingerprintKey,
} from '../store/item-view.ts';
import type { ListFilters } from '../domain/list-filters.ts';
import { writeContentVector } from '../ranker/content-vector.ts';
import { ItemIds } from './item-ids.ts';
import { ItemTexts } from './item-texts.ts';
import { ItemKeys } from './item-keys.ts';
import { grown, quarterMore } from '../domain/grown.ts';
import { ALL_TYPES, VECTOR_DIM, type Ranker } from '../ranker/reference-ranker.ts';

// Local copies: an imported binding is read through a getter under tsx, which showed in profiles
// of the per-item loops (isRankable runs for every item a trained model scores).
const ITEM_ENABLED = ENABLED;
const ITEM_IN_CATALOG = IN_CATALOG;
const UNKNOWN_TYPE = UNKNOWN;
const RANKABLE = ITEM_IN_CATALOG | ITEM_ENABLED;

/** Items kept in the `latest` list, newest first; the catalog-wide pass covers the rest. */
export const LATEST_SIZE = 5000;
const KEY_END = '\uffff';


/**
 * A key's place in an item's key order: deepest category paths (longest keys) first, then tags,
 * then the other filter keys (from OTHER_KEYS on), which similarCandidates does not go by.
 * Computed once per key: ranking by string prefixes inside the sort's comparator was ~1 s of a
 * ranking worker's start at 1,000,000 items (CPU profile).
 */
const KEY_RANK = 1 << 20;
const TAG_KEYS = KEY_RANK;
const OTHER_KEYS = 2 * KEY_RANK;
/**
 * Whether a key of this order gets a bitset: not tags, which are no filter field (DESIGN.md), so
 * no list's allowBitset reads theirs; at 1,000,000 items each was 156 KB, 31 MB for the ~200 tags of
 * the bench's catalog.
 */
const hasBitset = (order: number) => order < TAG_KEYS || order >= OTHER_KEYS;
const keyOrderOf = (key: string) =>
  (key.startsWith(CATEGORY_KEY_PREFIX) ? 1 : key.startsWith(TAG_KEY_PREFIX) ? 2 : 3) * KEY_RANK - Math.min(key.length, KEY_RANK - 1);

export class CatalogView {
  readonly environment: string;
  readonly config: EnvironmentConfig;
  readonly #store: Store;
  readonly #ranker: Ranker;
  readonly #infoFields: string[];
  #capacity = 0;
  flags = new Uint8Array(0);
  published = new Uint32Array(0);
  #type = new Uint8Array(0);
  #ends = new Uint32Array(0);
  #popularity = new Float32Array(0);
  /** Item id by ix (its type is config.itemTypes[type]) and ix by id, off the GC's heap. */
  readonly ids = new ItemIds();
  /** Each information field's value by ix, off the GC's heap. */
  readonly information = new Map<string, ItemTexts>();
  /** Each item's filter keys, as ids (item-keys.ts); the bitsets and postings are by key id. */
  readonly #keys = new ItemKeys();
  /** keyOrderOf each key id. */
  readonly #keyOrder: number[] = [];
  readonly #bitsets: Array<Uint32Array | undefined> = [];
  /**
   * Items of each category and tag key, in the order they got it: similarCandidates takes the
   * first ones of a key without walking a catalog-sized bitset (O(n / 32) per key: 10× the work
   * at 10× the catalog).
   */
  readonly #postings: Array<Uint32Array | undefined> = [];
  /** Entries used in each posting (typed, off the GC's heap: as number[] they were 42 MB at 1M items). */
  readonly #postingLength: number[] = [];
  /** #index's key ids of one item, reused. */
  readonly #idScratch: number[] = [];
  /** ix by publication time, newest first (ties: lower ix first); may hold items since disabled. */
  latest: number[] = [];
  /** The ix in `latest`. */
  #inLatest = new Set<number>();
  #latestList: { ix: Uint32Array; weight: Float32Array } | undefined;
  #allowScratch = new Uint32Array(0);
  /** similarCandidates' "already taken" marks: entry ix == #stamp means taken in this call. */
  #seenStamp = new Uint32Array(0);
  #stamp = 0;
  #clauseScratch = new Uint32Array(0);

  constructor(store: Store, environment: string, config: EnvironmentConfig, ranker: Ranker) {
    this.#store = store;
    this.environment = environment;
    this.config = config;
    this.#ranker = ranker;
    this.#infoFields = infoFieldsOf(config);
    for (const field of this.#infoFields) this.information.set(field, new ItemTexts());
    this.#grow(itemIndexCount(store, environment));
    // Laid out first, so the vectors go straight into the ranker's quantised records as they are
    // read: the ranker's copy is the only one (Ranker.addVector reads it). A float copy of them
    // all was 160 MB of a ranking worker at 1,000,000 items, and read whole before the kernel
    // got it, it stayed resident until a mark-compact that an idle worker never ran.
    this.#ranker.setItems(this.#itemArrays());
    this.#saved = this.#readSavedVectors();
    if (!this.#readItemView()) {
      const range = store.items.getRange({ start: [environment], end: [environment, KEY_END] });
      for (const { value } of range) this.#set(value as StoredItem, false);
      // In ix order, as read from the records: the scan met the items in id order.
      for (let id = 0; id < this.#postings.length; id++) this.#postings[id]?.subarray(0, this.#postingLength[id]).sort();
    }
    // A saved vector of an ix no longer in the catalog stays out, as when each was read by item.
    for (let ix = 0; ix < this.#saved.length; ix++) {
      if (this.#saved[ix] === 1 && (this.flags[ix]! & IN_CATALOG) === 0) this.#push(ix, null);
    }
    this.#saved = new Uint8Array(0);
    this.#rebuildLatest();
  }

  /** Which ix got the builder's saved content vector at the scan (1), cleared after it. */
  #saved: Uint8Array = new Uint8Array(0);
  /** An item's content vector, computed here and copied by the ranker (no array per item). */
  readonly #vectorScratch = new Float32Array(VECTOR_DIM);

  /**
   * The builder's content vectors, into the ranker in ix (key) order, a chunk of
   * VECTOR_CHUNK_ITEMS per record (store/model-layout.ts); then any saved one record per item before the
   * chunks, which the builder moves into chunks at its start (this may run before it has).
   * Returns which ix got one.
   */
  #readSavedVectors(): Uint8Array {
    const capacity = this.#capacity;
    const saved = new Uint8Array(capacity);
    // Values are copied through a scratch: a stored one need not be 4-byte aligned for a Float32Array.
    const scratch = new Float32Array(VECTOR_CHUNK_ITEMS * VECTOR_DIM);
    const scratchBytes = new Uint8Array(scratch.buffer);
    const model = this.#store.model;
    const chunkBytes = scratch.byteLength;
    const chunks = model.getRange({ start: contentVectorChunkKey(this.environment, 0), end: contentVectorChunkKey(this.environment, Math.ceil(capacity / VECTOR_CHUNK_ITEMS)) });
    for (const { key, value } of chunks) {
      const first = (key as [string, string, number])[2] * VECTOR_CHUNK_ITEMS;
      if (value.byteLength !== chunkBytes) continue;
      const n = Math.min(VECTOR_CHUNK_ITEMS, capacity - first);
      scratchBytes.set(value);
      this.#ranker.setVectors(first, scratch.subarray(0, n * VECTOR_DIM));
      saved.fill(1, first, first + n);
    }
    const one = scratch.subarray(0, VECTOR_DIM);
    for (const { key, value } of model.getRange({ start: contentVectorKey(this.environment, 0), end: contentVectorKey(this.environment, capacity) })) {
      const ix = (key as [string, string, number])[2];
      if (value.byteLength !== VECTOR_DIM * 4 || !(ix < capacity)) continue;
      scratchBytes.set(value);
      this.#ranker.setVectors(ix, one);
      saved[ix] = 1;
    }
    return saved;
  }

  /**
   * Every item from the builder's item view records (store/item-view.ts) instead of the items
   * themselves, when they were made for this configuration; false (nothing read) otherwise.
   * Their content vectors are the builder's chunks, which cover every item the records do.
   */
  #readItemView(): boolean {
    const state = this.#store.modelState;
    if (state.get(itemViewFingerprintKey(this.environment)) !== itemViewFingerprint(this.config)) return false;
    const chunks = state.getRange({ start: itemViewChunkKey(this.environment, 0), end: itemViewChunkKey(this.environment, 0xffffffff) });
    const ids = this.#idScratch;
    // Per chunk, its strings as key ids and type indices: each looked up once, not once per item.
    const keyIds: number[] = [];
    const types: number[] = [];
    const information = this.#infoFields.map((field) => this.information.get(field)!);
    for (const { key, value } of chunks) {
      if (!isStoredChunk(value)) continue;
      const first = (key as [string, string, number])[2] * ITEM_VIEW_CHUNK_ITEMS;
      keyIds.length = 0;
      types.length = 0;
      for (let e = 0; e < value.e.length && e < ITEM_VIEW_CHUNK_ITEMS; e++) {
        const t = value.e[e];
        if (!isStoredEntry(t)) continue;
        const ix = first + e;
        const [id, type, enabled, published, ends, keyRefs, info] = t;
        this.#setState(ix, id, (types[type] ??= this.#typeIx(value.s[type]!)), enabled === 1, published, ends);
        this.#push(ix, undefined);
        for (let f = 0; f < information.length; f++) information[f]!.set(ix, info[f] ?? undefined);
        ids.length = 0;
        for (const ref of keyRefs) ids.push((keyIds[ref] ??= this.#keyId(value.s[ref]!)));
        this.#indexIds(ix);
      }
    }
    return true;
  }

  /**
   * `latest` as the kernel's virtual neighbour row, rebuilt only after a change. Its weights are
   * ranks: f32 cannot hold unix seconds exactly, and only the order matters.
   */
  latestList(): { ix: Uint32Array; weight: Float32Array } {
    const latest = this.latest;
    return (this.#latestList ??= { ix: Uint32Array.from(latest), weight: Float32Array.from(latest, (_, i) => latest.length - i) });
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Applies one change of the feed: the item as it is now, or its absence. */
  apply(change: CatalogChange): void {
    const stored = this.#store.items.get([change.environment, change.itemType, change.itemId]) as StoredItem | undefined;
    if (stored) {
      this.#set(stored, change.op === 'enable' || change.op === 'disable');
    } else if (change.ix < this.#capacity) {
      this.flags[change.ix] = 0;
      this.#index(change.ix, []);
      this.#push(change.ix, null);
    }
  }

  /** The all-time popularity prior, padded to capacity (the builder's array may be shorter or longer). */
  setPopularity(popularity: Float32Array): void {
    this.#popularity.fill(0);
    this.#popularity.set(popularity.length > this.#capacity ? popularity.subarray(0, this.#capacity) : popularity);
    this.#ranker.setPopularity(this.#popularity);
  }

  typeIndex(ix: number): number {
    return this.#type[ix] ?? UNKNOWN_TYPE;
  }

  /**
   * The ix of an item of a configured type the view holds (in the catalog or not now), or
   * undefined: one the view has not applied yet, or known only from events, is in LMDB's item
   * index alone.
   */
  ixOf(itemType: string, id: string): number | undefined {
    const typeIx = this.config.itemTypes.indexOf(itemType);
    return typeIx < 0 ? undefined : this.ids.ixOf(typeIx, id);
  }

  /** Whether ix names an item currently in the catalog (enabled or not). */
  inCatalog(ix: number): boolean {
    return ix < this.#capacity && (this.flags[ix]! & ITEM_IN_CATALOG) !== 0;
  }

  /** Whether ix may be recommended at nowSec (in catalog, enabled, not expired). */
  isRankable(ix: number, nowSec: number): boolean {
    const ends = this.#ends[ix]!;
    return ix < this.#capacity && (this.flags[ix]! & RANKABLE) === RANKABLE && (ends === 0 || ends > nowSec);
  }

  /** The kernel's allowedTypesMask for a list's item types narrowed by its filters. */
  typesMask(listTypes: readonly string[], filters: readonly ListFilters[]): number {
    let types: readonly string[] | undefined = listTypes.length > 0 ? listTypes : undefined;
    for (const f of filters) {
      const t = filterItemTypes(f);
      if (t) types = types ? types.filter((x) => t.includes(x)) : t;
    }
    if (!types) return ALL_TYPES;
    let mask = 0;
    for (const t of types) {
      const i = this.config.itemTypes.indexOf(t);
      if (i >= 0 && i < 32) mask |= 1 << i;
    }
    return mask >>> 0;
  }

  /**
   * The bitset of items passing every filter, or null when the filters do not restrict beyond
   * item types. Valid until the next call (one scratch buffer).
   */
  allowBitset(filters: readonly ListFilters[]): Uint32Array | null {
    const clauses = filters.flatMap(filterClauses);
    if (clauses.length === 0) return null;
    const words = this.#capacity >>> 5;
    if (this.#allowScratch.length !== words) {
      this.#allowScratch = new Uint32Array(words);
      this.#clauseScratch = new Uint32Array(words);
    }
    const allow = this.#allowScratch.fill(0xffffffff);
    const clause = this.#clauseScratch;
    for (const keys of clauses) {
      clause.fill(0);
      for (const key of keys) {
        const id = this.#keys.idOf(key);
        const bits = id === undefined ? undefined : this.#bitsets[id];
        if (!bits) continue;
        for (let w = 0; w < bits.length; w++) clause[w]! |= bits[w]!;
      }
      for (let w = 0; w < words; w++) allow[w]! &= clause[w]!;
    }
    return allow;
  }

  /**
   * Items sharing the most specific categories (then broader ones) or tags with `ix`, at most
   * `max`, for content similarity when co-occurrence knows too little about an item.
   */
  similarCandidates(ix: number, max: number, out: number[]): number[] {
    out.length = 0;
    if (this.#seenStamp.length < this.#capacity) this.#seenStamp = new Uint32Array(this.#capacity);
    const stamp = ++this.#stamp;
    const seen = this.#seenStamp;
    seen[ix] = stamp;
    // Keys are kept deepest category first, then tags (see #index): most specific neighbours first.
    const keys = this.#keys;
    for (let k = keys.start(ix), end = k + keys.count(ix); k < end; k++) {
      const id = keys.pool[k]!;
      if (this.#keyOrder[id]! >= OTHER_KEYS) break;
      const items = this.#postings[id]!;
      const n = this.#postingLength[id]!;
      for (let i = 0; i < n && out.length < max; i++) {
        const candidate = items[i]!;
        if (seen[candidate] !== stamp) {
          seen[candidate] = stamp;
          out.push(candidate);
        }
      }
      if (out.length >= max) break;
    }
    return out;
  }

  #set(stored: StoredItem, stateOnly: boolean): void {
    const ix = stored.ix;
    if (ix >= this.#capacity) this.#grow(ix + 1);
    const item = stored.item;
    // What the builder's records hold of the item, made by the same function (store/item-view.ts).
    const entry = itemViewEntry(stored, this.config, this.#infoFields);
    const wasLatest = this.published[ix] !== entry.published;
    this.#setState(ix, entry.id, this.#typeIx(entry.type), entry.enabled, entry.published, entry.ends);
    for (let f = 0; f < this.#infoFields.length; f++) this.information.get(this.#infoFields[f]!)!.set(ix, entry.info[f]);
    // The vector is kept on a state change (enable, disable). While scanning, the builder's copy
    // is already in place (the engine then replays the feed from the builder's position,
    // recomputing what changed since); a fresh one otherwise.
    let vector: Float32Array | null | undefined;
    if (!stateOnly) {
      this.#index(ix, entry.keys);
      // Into reused memory: the ranker keeps its own (quantized) copy.
      if (!(this.#building && this.#saved[ix] === 1)) vector = writeContentVector(item, this.#vectorScratch) ? this.#vectorScratch : null;
    }
    this.#push(ix, vector);
    if (!this.#building && (wasLatest || !stateOnly)) this.#insertLatest(ix);
  }

  /** The kernel's type index of an item type (UNKNOWN_TYPE for one not configured). */
  #typeIx(itemType: string): number {
    const i = this.config.itemTypes.indexOf(itemType);
    return i < 0 ? UNKNOWN_TYPE : i;
  }

  #setState(ix: number, id: string, typeIx: number, enabled: boolean, published: number, ends: number): void {
    if (ix >= this.#capacity) this.#grow(ix + 1);
    this.flags[ix] = ITEM_IN_CATALOG | (enabled ? ITEM_ENABLED : 0);
    this.#type[ix] = typeIx;
    this.#ends[ix] = ends;
    this.published[ix] = published;
    this.ids.set(ix, typeIx, id);
  }

  /** True while the constructor scans: `latest` is made once afterwards. */
  #building = true;

  /** Sends one item's values to the ranker. `vector` undefined keeps the one held, null clears it. */
  #push(ix: number, vector: Float32Array | null | undefined): void {
    this.#ranker.updateItem(ix, { flags: this.flags[ix]!, type: this.#type[ix]!, published: this.published[ix]!, ends: this.#ends[ix]!, vector });
  }

  /** Makes `keys` the filter keys of ix. */
  /** ix's category keys (ids below keyCount), deepest first, into `out` (new_for_you's affinities). */
  categoriesOf(ix: number, out: number[]): number[] {
    out.length = 0;
    if (ix >= this.#capacity) return out;
    const keys = this.#keys;
    for (let k = keys.start(ix), end = k + keys.count(ix); k < end; k++) {
      const id = keys.pool[k]!;
      if (this.#keyOrder[id]! >= TAG_KEYS) break;
      out.push(id);
    }
    return out;
  }

  /** Filter keys known so far: every key id is below it. */
  get keyCount(): number {
    return this.#keyOrder.length;
  }

  #index(ix: number, keys: string[]): void {
    const ids = this.#idScratch;
    ids.length = 0;
    for (const key of keys) ids.push(this.#keyId(key));
    this.#indexIds(ix);
  }

  /** The id of a filter key, given one (and its order) if it is new. */
  #keyId(name: string): number {
    const id = this.#keys.intern(name);
    if (id >= this.#keyOrder.length) this.#keyOrder.push(keyOrderOf(name));
    return id;
  }

  /** Makes the key ids in #idScratch the filter keys of ix (in its bitsets and postings). */
  #indexIds(ix: number): void {
    const word = ix >>> 5;
    const bit = 1 << (ix & 31);
    const itemKeys = this.#keys;
    for (let k = itemKeys.start(ix), end = k + itemKeys.count(ix); k < end; k++) {
      const id = itemKeys.pool[k]!;
      const bits = this.#bitsets[id];
      if (bits && word < bits.length) bits[word]! &= ~bit;
      const items = this.#postings[id];
      if (!items) continue;
      const n = this.#postingLength[id]!;
      const at = items.subarray(0, n).indexOf(ix);
      if (at < 0) continue;
      items.copyWithin(at, at + 1, n);
      this.#postingLength[id] = n - 1;
    }
    const ids = this.#idScratch;
    const order = this.#keyOrder;
    // Deepest category paths (longest keys) first, then tags, then the rest: similarCandidates' order.
    if (ids.length > 1) ids.sort((a, b) => order[a]! - order[b]!);
    itemKeys.set(ix, ids);
    const words = this.#capacity >>> 5;
    for (const id of ids) {
      if (hasBitset(order[id]!)) {
        let bits = this.#bitsets[id];
        if (!bits || bits.length < words) this.#bitsets[id] = bits = bits ? grown(bits, words) : new Uint32Array(words);
        bits[word]! |= bit;
      }
      if (order[id]! >= OTHER_KEYS) continue;
      let items = this.#postings[id];
      const n = this.#postingLength[id] ?? 0;
      if (!items || n === items.length) this.#postings[id] = items = items ? grown(items, quarterMore(n, 4)) : new Uint32Array(4);
      items[n] = ix;
      this.#postingLength[id] = n + 1;
    }
  }

  /** Grows every array to hold `needed` items, with headroom so growth (a full kernel copy) is rare. */
  #grow(needed: number): void {
    const capacity = Math.max(1024, Math.ceil((needed * 1.25) / 32) * 32);
    if (capacity <= this.#capacity) return;
    const held = this.#capacity;
    const grow = <T extends Uint8Array | Uint32Array | Float32Array>(old: T, make: (n: number) => T): T => {
      const out = make(capacity);
      out.set(old as never);
      return out;
    };
    this.flags = grow(this.flags, (n) => new Uint8Array(n));
    this.#type = grow(this.#type, (n) => new Uint8Array(n).fill(UNKNOWN_TYPE));
    this.published = grow(this.published, (n) => new Uint32Array(n));
    this.#ends = grow(this.#ends, (n) => new Uint32Array(n));
    this.#popularity = grow(this.#popularity, (n) => new Float32Array(n));
    this.ids.grow(capacity);
    for (const values of this.information.values()) values.grow(capacity);
    this.#capacity = capacity;
    // Held 0: the constructor's first growth, which lays the ranker out next. From then on the
    // ranker keeps the vectors (the arrays have none) and writes the grown records' as zeros.
    if (held > 0) this.#ranker.growItems(this.#itemArrays(), held);
  }

  #itemArrays() {
    return { flags: this.flags, type: this.#type, published: this.published, ends: this.#ends, popularity: this.#popularity };
  }

  #rebuildLatest(): void {
    this.#building = false;
    this.latest = newestFirst(this.published, this.flags, this.#capacity, LATEST_SIZE);
    this.#inLatest = new Set(this.latest);
    this.#latestList = undefined;
  }

  /**
   * Puts ix at its place in `latest` (removing an older place). Whether it had one is a set
   * lookup: an indexOf over the 5,000 entries for every write, when a new item never has one,
   * was 4% of an item PUT's CPU at 40,000 items (issue 12's PUT profile).
   */
  #insertLatest(ix: number): void {
    const latest = this.latest;
    this.#latestList = undefined;
    if (this.#inLatest.delete(ix)) latest.splice(latest.indexOf(ix), 1);
    if (!(this.flags[ix]! & ITEM_IN_CATALOG)) return;
    const p = this.published[ix]!;
    let lo = 0;
    let hi = latest.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = this.published[latest[mid]!]!;
      if (q > p || (q === p && latest[mid]! < ix)) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= LATEST_SIZE) return;
    latest.splice(lo, 0, ix);
    this.#inLatest.add(ix);
    if (latest.length > LATEST_SIZE) this.#inLatest.delete(latest.pop()!);
  }
}

/**
 * The `max` ix in the catalog published last, newest first, ties in ix order (what `latest` holds).
 * Only the times above the max-th newest are sorted with a comparator; the ties at it are taken in
 * ix order as the scan meets them. Sorting every ix by comparator took 0.6 s of the ranking
 * worker's 11 s start at 1,000,000 items (CPU profile; 0.12 s now): a typed array sorts natively.
 */
export function newestFirst(published: Uint32Array, flags: Uint8Array, capacity: number, max: number): number[] {
  const times = new Uint32Array(capacity);
  let n = 0;
  for (let ix = 0; ix < capacity; ix++) if (flags[ix]! & ITEM_IN_CATALOG) times[n++] = published[ix]!;
  if (n === 0 || max <= 0) return [];
  // Ascending: the max-th newest time; fewer than max items are newer than it.
  const threshold = times.subarray(0, n).sort()[Math.max(0, n - max)]!;
  const newer: number[] = [];
  const tied: number[] = [];
  for (let ix = 0; ix < capacity; ix++) {
    if (!(flags[ix]! & ITEM_IN_CATALOG)) continue;
    const p = published[ix]!;
    if (p > threshold) newer.push(ix);
    else if (p === threshold && tied.length < max) tied.push(ix);
  }
  newer.sort((a, b) => published[b]! - published[a]! || a - b);
  for (let i = 0; newer.length < max && i < tied.length; i++) newer.push(tied[i]!);
  return newer;
}

