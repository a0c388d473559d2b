/**
 * @module recommend/signals
 * Popularity signals of one environment as a ranking worker holds them: the all-time
 * popularity prior (resident in the kernel) and the `popular` and `trending` lists, top items
 * by all-time and by recent hourly popularity, that those strategies rank from. Reloaded from
 * the model builder's arrays when the builder has written new events, at most once per
 * REFRESH_MS, so a request pays for a reload rarely and never for a stale-check it can skip.
 */
import { SECONDS_PER_BUCKET } from '../model/popularity.ts';
import type { Key } from 'lmdb';
import { copyU32Into, eventsPositionKey, popularityKey } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import type { CatalogView } from './catalog-view.ts';
import type { Ranker } from './reference-ranker.ts';

/** Items kept per ranked list: enough to survive exclusions and filters in nearly every request. */
export const TOP_LIST_SIZE = 5000;
const REFRESH_MS = 1000;
/** Trending looks at this many recent hours, each weighing half as much every HALF_LIFE_HOURS. */
const TRENDING_HOURS = 24;
const TRENDING_HALF_LIFE_HOURS = 6;

export interface TopList {
  ix: Uint32Array;
  /** Score of each entry (f32), best first. */
  weight: Float32Array;
}

const EMPTY: TopList = { ix: new Uint32Array(0), weight: new Float32Array(0) };
const NO_COUNTS = new Float32Array(0);

export class Signals {
  readonly #store: Store;
  readonly #view: CatalogView;
  readonly #ranker: Ranker;
  popular: TopList = EMPTY;
  trending: TopList = EMPTY;
  #position = -1;
  #hour = -1;
  #checkedAt = 0;
  /**
   * Reused for every stored array a refresh reads (the all-time counts and 24 hourly buckets):
   * copies of them were ~100 MB allocated a second on this serving thread at 1,000,000 items
   * while events arrive, and fed its garbage collector.
   */
  #words = new Uint32Array(0);
  #recent = new Float32Array(0);

  constructor(store: Store, view: CatalogView, ranker: Ranker) {
    this.#store = store;
    this.#view = view;
    this.#ranker = ranker;
  }

  /** Reloads when the builder moved on (or the hour turned) and REFRESH_MS has passed. */
  refresh(nowMs: number, force = false): void {
    if (!force && nowMs - this.#checkedAt < REFRESH_MS) return;
    this.#checkedAt = nowMs;
    const environment = this.#view.environment;
    const position = (this.#store.modelState.get(eventsPositionKey(environment)) as number | undefined) ?? 0;
    const hour = Math.floor(nowMs / 1000 / SECONDS_PER_BUCKET);
    if (!force && position === this.#position && hour === this.#hour) return;
    this.#position = position;
    this.#hour = hour;
    const all = this.#read(popularityKey(environment, 'all'));
    this.#view.setPopularity(all);
    this.popular = this.#top(all);
    const capacity = this.#view.capacity;
    const recent = this.#recent.length === capacity ? this.#recent.fill(0) : (this.#recent = new Float32Array(capacity));
    for (let h = 0; h < TRENDING_HOURS; h++) {
      const bucket = this.#read(popularityKey(environment, hour - h));
      if (bucket.length === 0) continue;
      const decay = 2 ** (-h / TRENDING_HALF_LIFE_HOURS);
      const n = Math.min(bucket.length, recent.length);
      for (let ix = 0; ix < n; ix++) recent[ix]! += bucket[ix]! * decay;
    }
    this.trending = this.#top(recent);
  }

  /** A stored f32 array, in the reused #words: valid until the next #read. */
  #read(key: Key): Float32Array {
    const bytes = this.#store.model.getBinaryFast(key);
    if (!bytes || bytes.length < 4) return NO_COUNTS;
    this.#words = copyU32Into(this.#words, bytes);
    return new Float32Array(this.#words.buffer, 0, bytes.length >>> 2);
  }

  /** The TOP_LIST_SIZE best positive entries of `scores`, by the kernel's top-k selection. */
  #top(scores: Float32Array): TopList {
    const n = Math.min(scores.length, this.#view.capacity);
    const buffer = this.#ranker.scoresBuffer(n);
    for (let ix = 0; ix < n; ix++) buffer[ix] = scores[ix]! > 0 ? scores[ix]! : -Infinity;
    const best = this.#ranker.selectTopK(n, TOP_LIST_SIZE);
    const ix = Uint32Array.from(best);
    return { ix, weight: Float32Array.from(ix, (i) => scores[i]!) };
  }
}
