/**
 * @module store/model-layout
 * Keys and binary layouts of what the model builder keeps for the ranking side. Values in the
 * `model` database are little-endian typed arrays indexed by dense item index (`ix`), so a
 * ranking worker can hand them to the WASM kernel without parsing:
 *
 * | key                               | layout                                                     |
 * |-----------------------------------|------------------------------------------------------------|
 * | [env, 'u', userId]                | Consumer record: u32 h, then h u32 of history triplets (ix, event type code, unix sec), oldest first, then every ix ever consumed, sorted u32 (no window) |
 * | [env, 'd', deviceId]              | same, for devices not (yet) linked to a user               |
 * | [env, 'hu' / 'hd' / 'cu' / 'cd', id] | History and consumed set apart, as written before the consumer records (moved into them by the builder at start) |
 * | [env, 'nb', ix]                   | Neighbours: u32 count n, n × u32 ix, n × f32 weight (in no order since the twentieth session, strongest first before: readers sort), then since the twenty-second the event position the row covers (u32 low, u32 high; absent: the environment's stored position) |
 * | [env, 'pop', 'all', chunk]        | Popularity: f32 per ix of ix chunk × POPULARITY_CHUNK_ITEMS on, weighted consumption count (readPopularity) |
 * | [env, 'pop', hour, chunk]         | the same for one UTC hour (hour = unix sec / 3600)          |
 * | [env, 'top', 'popular' / 'trending'] | Ranked list: u32 n, n × u32 ix, n × f32 score (builder/top-items.ts) |
 * | [env, 'item', 'flags']            | u8 per ix: bit 0 in catalog, bit 1 enabled                 |
 * | [env, 'cvc', chunk]               | Content vectors of ix chunk × VECTOR_CHUNK_ITEMS on: f32 × VECTOR_DIM each (ranker/content-vector.ts), zeros = none; absent = not saved |
 * | [env, 'cv', ix]                   | One content vector, as written before the chunks (read at start, moved into chunks by the builder) |
 */

import type { RowSorter } from './row-sorter.ts';
import type { Database } from 'lmdb';
import { withRoom } from '../domain/grown.ts';

export const EVENT_TYPE_CODES: Readonly<Record<string, number>> = {
  detail_pageview: 1,
  item_interaction: 2,
  checkpoint: 3,
  add_to_cart: 4,
  purchase: 5,
  click_on_recommendation: 6,
};

export const ITEM_IN_CATALOG = 1;
export const ITEM_ENABLED = 2;
export const UNKNOWN_TYPE = 255;

/** Model-state keys of the builder's positions: the last event seq and catalog change seq it wrote. */
export const eventsPositionKey = (env: string) => [env, 'pos', 'events'];
export const CHANGES_POSITION_KEY = ['pos', 'changes'];
/** The last event seq the report counters (builder/reports.ts) wrote: a consumer of the log of their own. */
export const reportsPositionKey = (env: string) => [env, 'pos', 'reports'];

/**
 * What the builder keeps of a user (or of a device not linked to one) in one record: the recent
 * history and every item ever consumed (for exclusion: no window). Two records before, read by
 * every recommendation request for its user and its device: four of its B-tree lookups (LMDB
 * was ~15% of a ranking worker's CPU at 1,000,000 items under perf), and two pages per touched
 * consumer in a builder flush.
 */
export const userRecordKey = (env: string, userId: string) => [env, 'u', userId];
export const deviceRecordKey = (env: string, deviceId: string) => [env, 'd', deviceId];
/** The two records apart, as written before (builder/consumer-records.ts moves them at start). */
export const LEGACY_CONSUMER_KINDS = { u: ['hu', 'cu'], d: ['hd', 'cd'] } as const;
export const neighboursKey = (env: string, ix: number) => [env, 'nb', ix];
/**
 * Items per popularity chunk: 1 KB of f32, within a leaf page, so a flush rewrites the chunks its
 * events touched. The arrays were one record each: at 1,000,000 items every 100 ms flush rewrote
 * 4 MB twice (all-time and the hour) as runs of overflow pages, the pattern that cost the
 * request counter ~20% of a core in LMDB's free-list search (store/report-keys.ts).
 */
export const POPULARITY_CHUNK_ITEMS = 256;
/** A whole array as written before the chunks (read by readPopularity, removed at the next write). */
export const popularityKey = (env: string, bucket: number | 'all') => [env, 'pop', bucket];
export const popularityChunkKey = (env: string, bucket: number | 'all', chunk: number) => [env, 'pop', bucket, chunk];
/** The builder's ranked `popular` and `trending` lists (builder/top-items.ts). */
export const topItemsKey = (env: string, list: 'popular' | 'trending') => [env, 'top', list];
/**
 * Content vectors per chunk: 8 × 128 bytes, within a leaf page like a popularity chunk. One
 * record per item made a ranking worker's start read 1,000,000 records (3.2 s of its 12 s at
 * 1,000,000 items, CPU profile); an item's write still rewrites one page.
 */
export const VECTOR_CHUNK_ITEMS = 8;
export const contentVectorChunkKey = (env: string, chunk: number) => [env, 'cvc', chunk];
/** One item's vector as written before the chunks (migrated by the builder at start). */
export const contentVectorKey = (env: string, ix: number) => [env, 'cv', ix];
/** 'type', 'published' and 'ends': arrays earlier versions wrote beside the flags, removed by the builder (builder/item-layout.ts). */
export const itemLayoutKey = (env: string, layout: 'flags' | 'type' | 'published' | 'ends') => [env, 'item', layout];

/** A typed array over a copy of `bytes` (LMDB buffers are neither aligned nor stable). */
export function copyU32(bytes: Uint8Array | undefined): Uint32Array {
  if (!bytes || bytes.byteLength < 4) return new Uint32Array(0);
  const out = new Uint32Array(bytes.byteLength >>> 2);
  new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
  return out;
}

/**
 * The words of a value read with getBinaryFast (whose buffer is valid only until the next read),
 * copied into `scratch` or, when it is too small, a larger array; their count is
 * `bytes.length >>> 2` (lmdb-js reuses one buffer and sets its `length`, not its byteLength).
 * For the ranking workers' per-request reads: no allocation once the scratch has grown.
 */
export function copyU32Into(scratch: Uint32Array<ArrayBuffer>, bytes: Uint8Array): Uint32Array<ArrayBuffer> {
  const words = bytes.length >>> 2;
  const out = scratch.length >= words ? scratch : new Uint32Array(Math.max(words, 2 * scratch.length));
  new Uint8Array(out.buffer, 0, words * 4).set(bytes.subarray(0, words * 4));
  return out;
}

/** Neighbours in an encoded row of `words` words at the start of `encoded` (0 when malformed). */
export function neighboursIn(encoded: Uint32Array, words: number): number {
  const n = words > 0 ? encoded[0]! : 0;
  return words >= neighboursWords(n) ? n : 0;
}

export function copyF32(bytes: Uint8Array | undefined): Float32Array {
  const u = copyU32(bytes);
  return new Float32Array(u.buffer, 0, u.length);
}

export function copyU8(bytes: Uint8Array | undefined): Uint8Array {
  return bytes ? new Uint8Array(bytes) : new Uint8Array(0);
}

/** Bytes of a typed array, for a put. */
export function bytesOf(array: Uint32Array | Float32Array | Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** A consumer record's parts: history triplets, oldest first, and the consumed ix, sorted. */
export interface ConsumerParts {
  entries: ArrayLike<number>;
  ix: ArrayLike<number>;
}

/**
 * Bytes of each consumer record, all in one new buffer: a builder flush encodes tens of
 * thousands, and an ArrayBuffer each cost an allocation and the GC of its external memory. An
 * empty record gives undefined (its key is removed).
 */
export function encodeConsumerRecords(records: readonly ConsumerParts[]): Array<Buffer | undefined> {
  let words = 0;
  for (const r of records) words += 1 + r.entries.length + r.ix.length;
  const out = new Uint32Array(words);
  const values: Array<Buffer | undefined> = [];
  let at = 0;
  for (const { entries, ix } of records) {
    if (entries.length + ix.length === 0) {
      values.push(undefined);
      continue;
    }
    const start = at;
    out[at++] = entries.length;
    for (let i = 0; i < entries.length; i++) out[at++] = entries[i]!;
    for (let i = 0; i < ix.length; i++) out[at++] = ix[i]!;
    values.push(Buffer.from(out.buffer, start * 4, (at - start) * 4));
  }
  return values;
}

/**
 * Where a consumer record's parts are within its `words` words (copied to `encoded`): history
 * triplets in [1, historyEnd), consumed ix in [historyEnd, words). A malformed length keeps
 * what fits.
 */
export function consumerHistoryEnd(encoded: Uint32Array, words: number): number {
  if (words === 0) return 0;
  const h = encoded[0]!;
  return 1 + Math.min(h - (h % 3), words - 1 - ((words - 1) % 3));
}

/** A stored consumer record's parts as plain arrays (the builder's, which it then changes). */
export function decodeConsumerRecord(bytes: Uint8Array | undefined): { entries: number[]; ix: number[] } {
  const words = copyU32(bytes);
  const end = consumerHistoryEnd(words, words.length);
  return { entries: Array.from(words.subarray(1, end)), ix: Array.from(words.subarray(Math.max(1, end))) };
}

export interface Neighbours {
  ix: Uint32Array;
  weight: Float32Array;
}

export function decodeNeighbours(bytes: Uint8Array | undefined): Neighbours {
  const all = copyU32(bytes);
  const n = all[0] ?? 0;
  if (n === 0 || all.length < 1 + 2 * n) return { ix: new Uint32Array(0), weight: new Float32Array(0) };
  return { ix: all.subarray(1, 1 + n), weight: new Float32Array(all.buffer, (1 + n) * 4, n) };
}

/**
 * Reads encoded neighbour rows into words it reuses (no copy per row, nothing for the GC): after
 * read(), neighbour k of the row is ix(k) with weight(k), for k < the count read() returned.
 * For rows read in bulk or per request (the builder's loads, the ranking workers' row arenas).
 */
export class NeighbourRowReader {
  #words = new Uint32Array(256);
  #floats = new Float32Array(this.#words.buffer);
  #n = 0;
  /** The event position the row read covers (rowPositionOf). */
  position = 0;

  /** Copies a stored row out of LMDB's reused buffer; returns its neighbour count (0: none or malformed). */
  read(bytes: Uint8Array | undefined): number {
    this.#n = this.position = 0;
    if (!bytes) return 0;
    const words = copyU32Into(this.#words, bytes);
    if (words !== this.#words) [this.#words, this.#floats] = [words, new Float32Array(words.buffer)];
    this.#n = neighboursIn(words, bytes.length >>> 2);
    if (this.#n > 0) this.position = rowPositionOf(words, bytes.length >>> 2);
    return this.#n;
  }

  /** Takes the `n` entries `sorter` sorted (a row read from the builder's shared memory, or this one's sortWith). */
  setSorted(sorter: RowSorter, n: number): void {
    const room = withRoom(this.#words, neighboursWords(n));
    if (room !== this.#words) [this.#words, this.#floats] = [room, new Float32Array(room.buffer)];
    this.#words[0] = this.#n = n;
    this.#words.set(sorter.ix.subarray(0, n), 1);
    this.#floats.set(sorter.weight.subarray(0, n), 1 + n);
  }

  ix(k: number): number {
    return this.#words[1 + k]!;
  }

  /** Orders the row read strongest first, equal weights by lower ix (rows are stored in no order). */
  sortWith(sorter: RowSorter): void {
    const n = this.#n;
    sorter.fit(n);
    for (let k = 0; k < n; k++) {
      sorter.gatheredIx[k] = this.#words[1 + k]!;
      sorter.gatheredW[k] = this.#floats[1 + n + k]!;
    }
    sorter.sort(n);
    this.setSorted(sorter, n);
  }

  weight(k: number): number {
    return this.#floats[1 + this.#n + k]!;
  }
}

/** Words (u32) of an encoded row of `n` neighbours. */
export const neighboursWords = (n: number) => 1 + 2 * n;
/** Words of a row as the builder writes it: its neighbours, then the event position it covers (rowPositionOf). */
export const stampedNeighboursWords = (n: number) => neighboursWords(n) + 2;

/**
 * The event position a stored row covers: every event up to it is counted in the row, none after.
 * The builder writes its rows in transactions of bounded size between its steps, each row
 * stamped with the position applied when it was written, and the environment's position only
 * once every row changed before it is stored (builder/cooccurrence.ts); a restart replays from that
 * position and skips, for each row, the events it already counts. 0 for a row written before
 * the stamp (then written with the position, so it counts no event after it).
 */
export function rowPositionOf(words: Uint32Array, length: number): number {
  const n = length > 0 ? words[0]! : 0;
  const at = neighboursWords(n);
  return length >= at + 2 ? words[at]! + words[at + 1]! * 2 ** 32 : 0;
}

/** Writes `position` after the `n` neighbours of the row encoded at word `at` of `out` (rowPositionOf reads it). */
export function stampRowPosition(out: Uint32Array, at: number, n: number, position: number): void {
  out[at + neighboursWords(n)] = position % 2 ** 32;
  out[at + neighboursWords(n) + 1] = Math.floor(position / 2 ** 32);
}

/**
 * Encodes a row of typed arrays into `out` at word `at` (neighboursWords(n) words); returns its
 * bytes, a view of `out`. The builder encodes a flush's rows into one buffer this way.
 */
export function encodeNeighboursInto(out: Uint32Array, at: number, ix: Uint32Array, weight: Float64Array | Float32Array, n: number): Buffer {
  out[at] = n;
  out.set(ix.subarray(0, n), at + 1);
  new Float32Array(out.buffer, out.byteOffset + (at + 1 + n) * 4, n).set(weight.subarray(0, n));
  return Buffer.from(out.buffer, out.byteOffset + at * 4, neighboursWords(n) * 4);
}


/**
 * A popularity array (all-time or one hour) from its chunks, over an array written whole before
 * the chunks if there is one; its length a multiple of POPULARITY_CHUNK_ITEMS. Into `scratch`
 * when it is long enough (zeroed first), else a new array.
 */
export function readPopularity(db: Database<Buffer>, env: string, bucket: number | 'all', scratch?: Float32Array): Float32Array {
  const whole = db.get(popularityKey(env, bucket));
  let length = whole ? Math.ceil(whole.length / 4 / POPULARITY_CHUNK_ITEMS) * POPULARITY_CHUNK_ITEMS : 0;
  const start = popularityChunkKey(env, bucket, 0);
  const end = popularityChunkKey(env, bucket, Number.MAX_SAFE_INTEGER);
  // Down to the whole-array key, which sorts just below chunk 0 (a range's end is exclusive).
  for (const key of db.getKeys({ start: end, end: popularityKey(env, bucket), reverse: true, limit: 1 })) {
    length = Math.max(length, ((key as unknown[])[3] as number) * POPULARITY_CHUNK_ITEMS + POPULARITY_CHUNK_ITEMS);
  }
  const out = scratch && scratch.length >= length ? scratch.subarray(0, length).fill(0) : new Float32Array(length);
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  if (whole) bytes.set(whole.subarray(0, Math.min(whole.length, bytes.length)));
  for (const { key, value } of db.getRange({ start, end })) {
    const at = ((key as unknown[])[3] as number) * POPULARITY_CHUNK_ITEMS * 4;
    bytes.set((value as Buffer).subarray(0, Math.min(value.length, POPULARITY_CHUNK_ITEMS * 4, bytes.length - at)), at);
  }
  return out;
}

/** A stored list (builder/top-items.ts TopItems.encode) as index and score arrays, copied; empty when absent or malformed. */
export function decodeTopItems(bytes: Uint8Array | undefined): { ix: Uint32Array; weight: Float32Array } {
  const n = bytes && bytes.length >= 4 ? Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32LE(0) : 0;
  if (!bytes || bytes.length !== 4 + 8 * n) return { ix: new Uint32Array(0), weight: new Float32Array(0) };
  return { ix: copyU32(bytes.subarray(4, 4 + 4 * n)), weight: copyF32(bytes.subarray(4 + 4 * n, 4 + 8 * n)) };
}
