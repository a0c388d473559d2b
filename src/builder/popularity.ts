/**
 * @module builder/popularity
 * Weighted consumption counts per item: all-time, and per UTC hour for trending lists. Dense
 * f32 arrays by item index, kept in memory; a flush writes the chunks events touched. From them the
 * builder keeps the `popular` and `trending` lists (builder/top-items.ts) and writes them beside
 * the arrays, so that no serving thread sums hourly arrays or selects from the whole catalog.
 */
import type { Key } from 'lmdb';
import type { Store } from '../store/open.ts';
import { bytesOf, POPULARITY_CHUNK_ITEMS, popularityChunkKey, popularityKey, readPopularity, topItemsKey } from '../store/model-layout.ts';
import { grown } from '../domain/grown.ts';
import { TopItems } from './top-items.ts';

export const SECONDS_PER_BUCKET = 3600;
/** Hourly buckets older than this many hours are dropped from memory (they stay in LMDB). */
const KEEP_BUCKETS = 48;
/** Items kept per ranked list: enough to survive exclusions and filters in nearly every request. */
export const TOP_LIST_SIZE = 5000;
/** Trending looks at this many recent hours, each weighing half as much every HALF_LIFE_HOURS. */
const TRENDING_HOURS = 24;
const TRENDING_HALF_LIFE_HOURS = 6;
const DECAY = Array.from({ length: TRENDING_HOURS }, (_, h) => 2 ** (-h / TRENDING_HALF_LIFE_HOURS));

const hourOf = (ms: number) => Math.floor(ms / 1000 / SECONDS_PER_BUCKET);

export class PopularityState {
  readonly #store: Store;
  readonly #env: string;
  /** Arrays by bucket, their lengths multiples of POPULARITY_CHUNK_ITEMS (a chunk is always whole). */
  readonly #counts = new Map<number | 'all', Float32Array>();
  /** Chunks touched since the last flush, by bucket. */
  readonly #dirty = new Map<number | 'all', Set<number>>();
  /** Buckets read from an array written whole before the chunks: rewritten as chunks at the next flush. */
  readonly #whole = new Set<number | 'all'>();
  readonly #popular = new TopItems(TOP_LIST_SIZE);
  readonly #trending = new TopItems(TOP_LIST_SIZE);
  /** Decayed sum of the TRENDING_HOURS buckets up to #trendHour (-1: not computed yet). */
  #trendScores = new Float32Array(0);
  /** The part of it from the hours before #trendHour. */
  #trendBase = new Float32Array(0);
  #trendHour = -1;
  /** An event of an earlier hour within the window arrived (an import): the base must be summed anew. */
  #trendStale = false;

  constructor(store: Store, env: string) {
    this.#store = store;
    this.#env = env;
  }

  #bucket(bucket: number | 'all'): Float32Array {
    let counts = this.#counts.get(bucket);
    if (!counts) {
      counts = this.#read(bucket);
      this.#counts.set(bucket, counts);
      if (this.#store.model.get(popularityKey(this.#env, bucket)) !== undefined) this.#whole.add(bucket);
    }
    return counts;
  }

  #read(bucket: number | 'all'): Float32Array {
    return readPopularity(this.#store.model, this.#env, bucket);
  }

  #add(bucket: number | 'all', ix: number, w: number): void {
    let counts = this.#bucket(bucket);
    if (ix >= counts.length) {
      const length = Math.ceil(Math.max(ix + 1, counts.length * 2, 1024) / POPULARITY_CHUNK_ITEMS) * POPULARITY_CHUNK_ITEMS;
      counts = grown(counts, length);
      this.#counts.set(bucket, counts);
    }
    counts[ix] = counts[ix]! + w;
    let chunks = this.#dirty.get(bucket);
    if (!chunks) this.#dirty.set(bucket, (chunks = new Set()));
    chunks.add(Math.floor(ix / POPULARITY_CHUNK_ITEMS));
  }

  add(ix: number, unixSec: number, w: number): void {
    if (w <= 0) return;
    this.#add('all', ix, w);
    this.#popular.changed(ix);
    const bucket = Math.floor(unixSec / SECONDS_PER_BUCKET);
    this.#add(bucket, ix, w);
    if (this.#trendHour < 0) return;
    if (bucket !== this.#trendHour) {
      // An earlier hour changes the base; a later one means the hour turned: both sum anew at the flush.
      if (this.#trendHour - bucket < TRENDING_HOURS) this.#trendStale = true;
      return;
    }
    if (ix >= this.#trendScores.length) this.#trendScores = grown(this.#trendScores, Math.max(ix + 1, this.#trendScores.length * 2, 1024));
    // The same sum as #moveTrendTo's, in the same order: a restarted builder (which sums at start)
    // writes the bits one that never stopped writes.
    this.#trendScores[ix] = (this.#trendBase[ix] ?? 0) + this.#counts.get(bucket)![ix]!;
    this.#trending.changed(ix);
  }

  /**
   * Sums the hours up to `hour` anew, oldest first and the current hour last, so that an event of
   * the current hour only adds its bucket's count to a base that holds still for the hour. The
   * earlier hours are read for the sum and not kept: at 1,000,000 items each is up to 4 MB.
   */
  #moveTrendTo(hour: number): void {
    let base = new Float32Array(0);
    for (let age = TRENDING_HOURS - 1; age >= 1; age--) {
      const counts = this.#counts.get(hour - age) ?? this.#read(hour - age);
      if (counts.length > base.length) base = grown(base, counts.length);
      for (let ix = 0; ix < counts.length; ix++) base[ix] = base[ix]! + counts[ix]! * DECAY[age]!;
    }
    const current = this.#bucket(hour);
    const scores = new Float32Array(Math.max(base.length, current.length));
    for (let ix = 0; ix < scores.length; ix++) scores[ix] = (base[ix] ?? 0) + (current[ix] ?? 0);
    this.#trendBase = base;
    this.#trendScores = scores;
    this.#trendHour = hour;
    this.#trendStale = false;
    this.#trending.select(scores);
  }

  /** When the trending list next needs a flush without any event: the next hour. */
  get dueAt(): number {
    return this.#trendHour < 0 ? 0 : (this.#trendHour + 1) * SECONDS_PER_BUCKET * 1000;
  }

  /**
   * The returned function writes the dirty chunks as they are now: copies, since the builder
   * applies events before the flush commits (its rows are written between its steps first). The
   * dirty chunks alone: at 1,000,000 items copying the whole arrays was 8 MB a flush (the
   * all-time counts and the hour's), ~2% of the builder. The lists are written when they changed,
   * and on the first flush (a data directory written before they were kept has none).
   */
  prepareFlush(nowMs = Date.now()): () => void {
    const writes: Array<[Key, Buffer]> = [];
    const first = this.#trendHour < 0;
    if (first) this.#popular.select(this.#bucket('all'));
    if (first || this.#trendStale || hourOf(nowMs) !== this.#trendHour) {
      this.#moveTrendTo(hourOf(nowMs));
      writes.push([topItemsKey(this.#env, 'trending'), this.#trending.encode(this.#trendScores)]);
    } else if (this.#trending.update(this.#trendScores)) {
      writes.push([topItemsKey(this.#env, 'trending'), this.#trending.encode(this.#trendScores)]);
    }
    if (this.#popular.update(this.#bucket('all')) || first) {
      writes.push([topItemsKey(this.#env, 'popular'), this.#popular.encode(this.#bucket('all'))]);
    }
    const removes: Key[] = [];
    for (const bucket of this.#whole) {
      // Every chunk of an array read whole, once; then its whole record goes.
      const counts = this.#counts.get(bucket);
      if (!counts) continue;
      let chunks = this.#dirty.get(bucket);
      if (!chunks) this.#dirty.set(bucket, (chunks = new Set()));
      for (let chunk = 0; chunk * POPULARITY_CHUNK_ITEMS < counts.length; chunk++) if (this.#chunkHasCounts(counts, chunk)) chunks.add(chunk);
      removes.push(popularityKey(this.#env, bucket));
    }
    this.#whole.clear();
    for (const [bucket, chunks] of this.#dirty) {
      const counts = this.#counts.get(bucket)!;
      for (const chunk of chunks) {
        const from = chunk * POPULARITY_CHUNK_ITEMS;
        writes.push([popularityChunkKey(this.#env, bucket, chunk), bytesOf(counts.slice(from, from + POPULARITY_CHUNK_ITEMS))]);
      }
    }
    this.#dirty.clear();
    const oldest = hourOf(nowMs) - KEEP_BUCKETS;
    for (const bucket of this.#counts.keys()) if (bucket !== 'all' && bucket < oldest) this.#counts.delete(bucket);
    return () => {
      for (const key of removes) this.#store.model.remove(key);
      for (const [key, bytes] of writes) this.#store.model.put(key, bytes);
    };
  }

  #chunkHasCounts(counts: Float32Array, chunk: number): boolean {
    for (let ix = chunk * POPULARITY_CHUNK_ITEMS; ix < (chunk + 1) * POPULARITY_CHUNK_ITEMS; ix++) if (counts[ix] !== 0) return true;
    return false;
  }
}
