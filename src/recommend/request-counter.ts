/**
 * @module recommend/request-counter
 * The reporting counters that only the recommendation route sees (recommendation requests are
 * not events): requests per list_name, user_group, channel and page_type, the items recommended
 * (per-item counts and the day's coverage bits, in chunks of ix: store/report-keys.ts) and the request latency histogram, per UTC
 * day and hour (keys in store/report-keys.ts). Counted on the main thread in memory; every
 * FLUSH_MS one asynchronous LMDB transaction adds them to the stored ones. Only this module
 * writes these keys, so its read-modify-write never races the builder's. A crash loses at most
 * FLUSH_MS of request counts, and of per-item counts what was held back: ITEMS_FLUSH_MS, or at a
 * large catalog the time the last backlog took to write (~2 min at 1,000,000 items), and that
 * backlog's unwritten part: reporting, not billing.
 */
import { grown } from '../domain/grown.ts';
import { LATENCY_BUCKETS, latencyBucket } from '../domain/latency-buckets.ts';
import { copyU32 } from '../store/model.ts';
import { addToRollup, COUNT_CHUNK_ITEMS, COVERAGE_CHUNK_ITEMS, coverageKey, dayOf, hourOf, latencyKey, recommendedCountsKey, rollupKey } from '../store/report-keys.ts';
import type { Store } from '../store/open.ts';

const FLUSH_MS = 1000;
/**
 * Per-item counts are written with the rest while a flush holds few items (ITEMS_AT_ONCE), else
 * every ITEMS_FLUSH_MS: at 1,000,000 items a second's requests touch most of the catalog's ~4,000
 * count chunks, and rewriting them every second put LMDB's free-page list insertion
 * (`mdb_midl_insert`) at ~4% of all the service's CPU again (perf, the 1M bench's data).
 */
const ITEMS_AT_ONCE = 4096;
const ITEMS_FLUSH_MS = 10_000;
/**
 * Count chunks written per flush at most; new per-item counts are taken only once the backlog is
 * written, so at a large catalog they are taken less often than every ITEMS_FLUSH_MS (1,000,000
 * items: ~3,900 chunks, ~2 min) and keep counting in the day's array meanwhile. Written in one
 * go, a 100,000-item catalog's ~390 chunks held the main thread 28–37 ms every 10 s (on a shared
 * core): code run every 10 s stays cold (in-process, 45–50 ms cold, ~7 ms once optimized, ~18 µs
 * a chunk); a slice every second stays optimized, ~1 ms for 32 chunks. A tenth of the backlog
 * per flush instead held it 5 ms at p50 and 21 ms at p99 at 1,000,000 items (the bench).
 */
const COUNT_CHUNKS_PER_FLUSH = 32;
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
  readonly #store: Store;
  /** Each environment's current hour. */
  #current = new Map<string, HourCounts>();
  /** Hours counted since the last flush (current ones included). */
  #hours: HourCounts[] = [];
  /**
   * Per environment and day, times each ix was recommended (shown), and the ix counted since the
   * last flush: a typed array, because a response shows ~20 items and a string key per item cost
   * the main thread more than the rest of the counting, and a put per item per flush up to
   * 50,000 LMDB puts a second at the benchmark's load.
   */
  #items = new Map<string, ItemCounts>();
  /** `dimension\u0000value` per dimension and value (values are configured names: bounded). */
  readonly #dimensionKeys = new Map<string, Map<string, string>>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();
  #itemsFlushedAt = Date.now();
  /** Per-item counts taken but not written yet, oldest first; `at` is the next ix position to write. */
  #backlog: Array<{ environment: string; day: string; taken: ItemsTaken; at: number }> = [];
  readonly #onFlushed: (ms: number) => void;

  /**
   * `onFlushed`: how long each flush held this thread, ms (taking the counts, and the transaction
   * callback that adds them to the stored ones; the commit runs on LMDB's write thread).
   */
  constructor(store: Store, onFlushed: (ms: number) => void = () => undefined) {
    this.#store = store;
    this.#onFlushed = onFlushed;
    this.#timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
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
   * Adds what was counted to LMDB (per-item counts when few or due, or `all`); resolves once
   * committed. Items held back keep counting in the same day's ItemCounts.
   */
  flush(all = false): Promise<void> {
    const startedAt = performance.now();
    const nowMs = Date.now();
    let touched = 0;
    for (const counted of this.#items.values()) touched += counted.touchedCount;
    const itemsDue = touched > 0 && (all || (this.#backlog.length === 0 && (touched <= ITEMS_AT_ONCE || nowMs - this.#itemsFlushedAt >= ITEMS_FLUSH_MS)));
    if (this.#hours.length === 0 && !itemsDue && this.#backlog.length === 0) return this.#flushing;
    const hours = this.#hours;
    [this.#hours, this.#current] = [[], new Map()];
    // What each day counted since the last flush, taken out of its dense array, which stays for the
    // day's next requests: a new array per flush cost ~0.4 MB (at 100,000 items) allocated, grown
    // and collected every second, whatever the load.
    if (itemsDue) {
      const today = `${SEP}${dayOf(nowMs)}`;
      for (const [id, counted] of this.#items) {
        if (counted.touchedCount > 0) {
          const [environment = '', day = ''] = id.split(SEP);
          const taken = counted.take();
          this.#backlog.push({ environment, day, taken, at: 0 });
        }
        // A past day's counts are taken whole with this flush: its array goes.
        if (!id.endsWith(today)) this.#items.delete(id);
      }
      this.#itemsFlushedAt = nowMs;
    }
    // `all`: everything now.
    const chunkBudget = all ? Infinity : COUNT_CHUNKS_PER_FLUSH;
    const state = this.#store.modelState;
    const takingMs = performance.now() - startedAt;
    // Chained: a flush never starts before the previous one committed, so no count is added twice over.
    this.#flushing = this.#flushing
      .then(() =>
        this.#store.modelRoot.transaction(() => {
          const callbackAt = performance.now();
          for (const hour of hours) {
            const counts: Array<[string, number]> = [];
            for (const [key, n] of hour.dimensions) counts.push([`${key}${SEP}requests`, n]);
            const latency = hour.latency;
            for (const [tag, period] of [['d', dayOf(hour.startMs)], ['h', hourOf(hour.startMs)]] as const) {
              if (counts.length > 0) addToRollup(state, rollupKey(hour.environment, tag, period, 'requests'), counts);
              if (!latency.some((n) => n > 0)) continue;
              const key = latencyKey(hour.environment, tag, period);
              const stored = (state.get(key) as number[] | undefined) ?? [];
              state.put(key, latency.map((n, i) => n + (stored[i] ?? 0)));
            }
          }
          // Runs after every earlier flush's callback (chained), so the backlog is drained in order.
          let budget = chunkBudget;
          while (budget > 0 && this.#backlog.length > 0) {
            const entry = this.#backlog[0]!;
            const { to, chunks: written } = addItemCounts(state, entry.environment, entry.day, entry.taken, entry.at, budget);
            budget -= written;
            entry.at = to;
            if (to >= entry.taken.ix.length) this.#backlog.shift();
          }
          this.#onFlushed(takingMs + performance.now() - callbackAt);
        }),
      )
      .then(() => undefined);
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush(true);
  }
}

/**
 * Adds a day's item counts from position `from` to its stored chunks, at most `maxChunks` of them,
 * and sets their coverage bits: only the chunks holding a counted ix are read and written, and a
 * coverage chunk only when a bit is new. Returns the position it stopped at and the count chunks
 * it wrote.
 */
function addItemCounts(state: Store['modelState'], environment: string, day: string, { ix: ixs, counts }: ItemsTaken, from: number, maxChunks: number): { to: number; chunks: number } {
  let end = from;
  let chunks = 0;
  for (; end < ixs.length && chunks < maxChunks; chunks++) {
    const chunk = Math.floor(ixs[end]! / COUNT_CHUNK_ITEMS);
    while (end < ixs.length && Math.floor(ixs[end]! / COUNT_CHUNK_ITEMS) === chunk) end++;
  }
  for (let at = from; at < end; ) {
    const chunk = Math.floor(ixs[at]! / COUNT_CHUNK_ITEMS);
    const first = chunk * COUNT_CHUNK_ITEMS;
    const key = recommendedCountsKey(environment, day, chunk);
    const sums = new Uint32Array(COUNT_CHUNK_ITEMS);
    sums.set(copyU32(state.get(key) as Uint8Array | undefined).subarray(0, COUNT_CHUNK_ITEMS));
    for (; at < end && ixs[at]! < first + COUNT_CHUNK_ITEMS; at++) sums[ixs[at]! - first]! += counts[at]!;
    state.put(key, Buffer.from(sums.buffer));
  }
  for (let at = from; at < end; ) {
    const chunk = Math.floor(ixs[at]! / COVERAGE_CHUNK_ITEMS);
    const first = chunk * COVERAGE_CHUNK_ITEMS;
    const key = coverageKey(environment, day, chunk);
    const stored = state.get(key) as Uint8Array | undefined;
    const bits = new Uint8Array(COVERAGE_CHUNK_ITEMS / 8);
    if (stored) bits.set(stored.subarray(0, bits.length));
    let added = stored === undefined;
    for (; at < end && ixs[at]! < first + COVERAGE_CHUNK_ITEMS; at++) {
      const bit = ixs[at]! - first;
      const mask = 1 << (bit & 7);
      if ((bits[bit >> 3]! & mask) !== 0) continue;
      bits[bit >> 3]! |= mask;
      added = true;
    }
    if (added) state.put(key, Buffer.from(bits.buffer));
  }
  return { to: end, chunks };
}

/** A day's counts since the last flush: the ix counted, ascending, and their counts alongside. */
interface ItemsTaken {
  ix: Uint32Array;
  counts: Uint32Array;
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

  /** What was counted since the last take, in ix order; the counts start again from 0. */
  take(): ItemsTaken {
    const ix = this.touched.slice(0, this.touchedCount).sort();
    const counts = new Uint32Array(ix.length);
    for (let i = 0; i < ix.length; i++) {
      counts[i] = this.counts[ix[i]!]!;
      this.counts[ix[i]!] = 0;
    }
    this.touchedCount = 0;
    return { ix, counts };
  }
}
