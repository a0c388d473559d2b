/**
 * @module main-thread/request-counter
 * The reporting counters that only the recommendation route sees (recommendation requests are
 * not events): requests per list_name, user_group, channel and page_type, the items recommended
 * (per-item counts and the day's coverage bits) and the request latency histogram, per UTC day
 * and hour. Counted on the main thread in memory; every FLUSH_MS what was counted is posted to
 * the model builder's report counters thread, which adds it to the stored counters in its next write
 * (builder/request-counts.ts): the main thread makes no LMDB write for them. A crash loses at most
 * FLUSH_MS of request counts plus what the builder had not written yet, and of per-item counts
 * what was held back (ITEMS_FLUSH_MS): reporting, not billing.
 */
import { grown } from '../domain/grown.ts';
import { LATENCY_BUCKETS, latencyBucket } from '../domain/latency-buckets.ts';
import type { HourTotals, ItemTotals, RequestCounts } from '../domain/request-counts.ts';
import { dayOf } from '../store/report-keys.ts';

const FLUSH_MS = 1000;
/**
 * Per-item counts are posted with the rest while a flush holds few items (ITEMS_AT_ONCE), else
 * every ITEMS_FLUSH_MS: at 1,000,000 items a second's requests touch most of the catalog's ~4,000
 * count chunks, and rewriting them every second put LMDB's free-page list insertion
 * (`mdb_midl_insert`) at ~4% of all the service's CPU (perf, the 1M bench's data).
 */
const ITEMS_AT_ONCE = 4096;
const ITEMS_FLUSH_MS = 10_000;
/**
 * Per-item counts go at most this many to a post (~0.1 ms of work), the rest in posts on the next
 * turns: taking ten seconds of counts at 1,000,000 items whole (~800,000 touched) was 5.35 ms of
 * the main thread's time (in-process), and issue 12 asks periodic work for under 1 ms.
 */
export const ITEMS_PER_POST = 16_384;
const SEP = '\u0000';
const MS_PER_HOUR = 3_600_000;

/**
 * What one environment counted in one UTC hour since the last flush. A request finds its hour
 * by a range check (no key built per request: string keys per request were most of the
 * counting's cost and of the main thread's garbage); the day rollup gets the same counts.
 */
interface HourCounts {
  environment: string;
  startMs: number;
  /** `dimension\u0000value` → requests. */
  dimensions: Map<string, number>;
  latency: number[];
  /** The day's recommended items (shared by the day's hours). */
  items: ItemCounts;
}

export class RequestCounter {
  /** Where the counts go: the model builder (ModelBuilder.postRequestCounts), or a test's writer. */
  readonly #post: (counts: RequestCounts) => void;
  /** Each environment's current hour. */
  #current = new Map<string, HourCounts>();
  /** Hours counted since the last flush (current ones included). */
  #hours: HourCounts[] = [];
  /**
   * Per environment and day, times each ix was recommended (shown), and the ix counted since the
   * last flush: a typed array, because a response shows ~20 items and a string key per item cost
   * the main thread more than the rest of the counting.
   */
  #items = new Map<string, ItemCounts>();
  /** `dimension\u0000value` per dimension and value (values are configured names: bounded). */
  readonly #dimensionKeys = new Map<string, Map<string, string>>();
  readonly #timer: NodeJS.Timeout;
  #itemsFlushedAt = Date.now();
  /** Per-item counts of the last items-due flush not posted yet, and the turn that posts more. */
  #itemsLeft = 0;
  #itemsPosting: NodeJS.Immediate | undefined;
  readonly #onFlushed: (ms: number) => void;

  /** `onFlushed`: how long each flush held this thread, ms (taking the counts and posting them). */
  constructor(post: (counts: RequestCounts) => void, onFlushed: (ms: number) => void = () => undefined) {
    this.#post = post;
    this.#onFlushed = onFlushed;
    this.#timer = setInterval(() => this.flush(), FLUSH_MS).unref();
  }

  #hour(environment: string, nowMs: number): HourCounts {
    const current = this.#current.get(environment);
    if (current && nowMs >= current.startMs && nowMs < current.startMs + MS_PER_HOUR) return current;
    const startMs = nowMs - (nowMs % MS_PER_HOUR);
    const itemsId = `${environment}${SEP}${dayOf(nowMs)}`;
    let items = this.#items.get(itemsId);
    if (!items) this.#items.set(itemsId, (items = new ItemCounts()));
    const hour: HourCounts = { environment, startMs, dimensions: new Map(), latency: new Array<number>(LATENCY_BUCKETS).fill(0), items };
    this.#current.set(environment, hour);
    this.#hours.push(hour);
    return hour;
  }

  #add(hour: HourCounts, dimension: string, value: string): void {
    let keys = this.#dimensionKeys.get(dimension);
    if (!keys) this.#dimensionKeys.set(dimension, (keys = new Map()));
    let key = keys.get(value);
    if (key === undefined) keys.set(value, (key = `${dimension}${SEP}${value}`));
    hour.dimensions.set(key, (hour.dimensions.get(key) ?? 0) + 1);
  }

  /** One request: +1 for each of its lists' names, and +1 for its user group, channel and page type. */
  count(environment: string, nowMs: number, lists: ReadonlyArray<{ name: string }>, userGroup: string, channel: string, pageType: string): void {
    const hour = this.#hour(environment, nowMs);
    for (let i = 0; i < lists.length; i++) this.#add(hour, 'list_name', lists[i]!.name);
    this.#add(hour, 'user_group', userGroup);
    this.#add(hour, 'channel', channel);
    this.#add(hour, 'page_type', pageType);
  }

  /** The items a response showed (dense indices): the first `shown` of `ix`. */
  recommended(environment: string, nowMs: number, ix: ArrayLike<number>, shown = ix.length): void {
    const items = this.#hour(environment, nowMs).items;
    for (let i = 0; i < shown; i++) items.add(ix[i]!);
  }

  /** One answered request's latency, ms. */
  latency(environment: string, nowMs: number, ms: number): void {
    this.#hour(environment, nowMs).latency[latencyBucket(ms)]! += 1;
  }

  /**
   * Posts what was counted (per-item counts when few or due, or `all`). Items held back keep
   * counting in the same day's ItemCounts.
   */
  flush(all = false): void {
    const startedAt = performance.now();
    const nowMs = Date.now();
    let touched = 0;
    for (const counted of this.#items.values()) touched += counted.touchedCount;
    const itemsDue = touched > 0 && (all || touched <= ITEMS_AT_ONCE || nowMs - this.#itemsFlushedAt >= ITEMS_FLUSH_MS);
    if (this.#hours.length === 0 && !itemsDue) return;
    const hours: HourTotals[] = [];
    for (const hour of this.#hours) {
      const counts: Array<[string, number]> = [];
      for (const [key, n] of hour.dimensions) counts.push([`${key}${SEP}requests`, n]);
      hours.push({ environment: hour.environment, startMs: hour.startMs, counts, latency: hour.latency });
    }
    [this.#hours, this.#current] = [[], new Map()];
    // What each day counted since the last flush, taken out of its dense array, which stays for the
    // day's next requests: a new array per flush cost ~0.4 MB (at 100,000 items) allocated, grown
    // and collected every second, whatever the load.
    if (itemsDue) {
      this.#itemsLeft = touched;
      this.#itemsFlushedAt = nowMs;
    }
    const items = this.#takeItems(all ? Infinity : ITEMS_PER_POST, nowMs);
    this.#post({ type: 'requestCounts', hours, items });
    this.#onFlushed(performance.now() - startedAt);
    this.#postItemsLater();
  }

  /** Up to `max` of the per-item counts left to post, the days' arrays kept (a past day's goes once empty). */
  #takeItems(max: number, nowMs: number): ItemTotals[] {
    const items: ItemTotals[] = [];
    let budget = Math.min(max, this.#itemsLeft);
    if (budget === 0) return items;
    const today = `${SEP}${dayOf(nowMs)}`;
    for (const [id, counted] of this.#items) {
      if (budget === 0) break;
      if (counted.touchedCount > 0) {
        const taken = counted.take(budget);
        budget -= taken.ix.length;
        this.#itemsLeft -= taken.ix.length;
        const [environment = '', day = ''] = id.split(SEP);
        items.push({ environment, day, ...taken });
      }
      if (counted.touchedCount === 0 && !id.endsWith(today)) this.#items.delete(id);
    }
    // Fewer were touched than counted at the flush (nothing else takes them): none are left.
    if (budget > 0) this.#itemsLeft = 0;
    return items;
  }

  #postItemsLater(): void {
    if (this.#itemsLeft === 0 || this.#itemsPosting) return;
    this.#itemsPosting = setImmediate(() => {
      this.#itemsPosting = undefined;
      const startedAt = performance.now();
      const items = this.#takeItems(ITEMS_PER_POST, Date.now());
      if (items.length > 0) this.#post({ type: 'requestCounts', hours: [], items });
      this.#onFlushed(performance.now() - startedAt);
      this.#postItemsLater();
    });
  }

  /** Stops the timer and posts what is left. */
  close(): void {
    clearInterval(this.#timer);
    clearImmediate(this.#itemsPosting);
    this.#itemsPosting = undefined;
    this.flush(true);
  }
}

/** Times each ix was counted, and which ix were (so a flush touches only those). */
class ItemCounts {
  counts = new Uint32Array(1024);
  touched = new Uint32Array(256);
  touchedCount = 0;

  add(ix: number): void {
    if (ix >= this.counts.length) {
      this.counts = grown(this.counts, Math.max(ix + 1, this.counts.length * 2));
    }
    if (this.counts[ix]!++ > 0) return;
    if (this.touchedCount === this.touched.length) {
      this.touched = grown(this.touched, this.touched.length * 2);
    }
    this.touched[this.touchedCount++] = ix;
  }

  /** Up to `max` of the ix counted since their last take (the latest first), with their counts, which start again from 0. */
  take(max = Infinity): { ix: Uint32Array; counts: Uint32Array } {
    const from = this.touchedCount - Math.min(max, this.touchedCount);
    const ix = this.touched.slice(from, this.touchedCount);
    const counts = new Uint32Array(ix.length);
    for (let i = 0; i < ix.length; i++) {
      counts[i] = this.counts[ix[i]!]!;
      this.counts[ix[i]!] = 0;
    }
    this.touchedCount = from;
    return { ix, counts };
  }
}
