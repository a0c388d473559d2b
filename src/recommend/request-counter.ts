/**
 * @module recommend/request-counter
 * The reporting counters that only the recommendation route sees (recommendation requests are
 * not events): requests per list_name, user_group, channel and page_type, the items recommended
 * (per-item counts and the day's coverage bitset) and the request latency histogram, per UTC
 * day and hour (keys in store/report-keys.ts). Counted on the main thread in memory; every
 * FLUSH_MS one asynchronous LMDB transaction adds them to the stored ones. Only this module
 * writes these keys, so its read-modify-write never races the builder's. A crash loses at most
 * FLUSH_MS of counts (reporting, not billing).
 */
import { grown } from '../domain/grown.ts';
import { LATENCY_BUCKETS, latencyBucket } from '../domain/latency-buckets.ts';
import { copyU32 } from '../store/model.ts';
import { addToRollup, coverageKey, dayOf, hourOf, latencyKey, recommendedCountsKey, rollupKey } from '../store/report-keys.ts';
import type { Store } from '../store/open.ts';

const FLUSH_MS = 1000;
const SEP = '\u0000';

export class RequestCounter {
  readonly #store: Store;
  /** env, `d`/`h`, period, dimension, value → requests. */
  #counts = new Map<string, number>();
  /**
   * Per environment and day, times each ix was recommended (shown), and the ix counted since the
   * last flush: a typed array, because a response shows ~20 items and a string key per item cost
   * the main thread more than the rest of the counting, and a put per item per flush up to
   * 50,000 LMDB puts a second at the benchmark's load.
   */
  #items = new Map<string, ItemCounts>();
  /** env, `d`/`h`, period → latency histogram. */
  #latency = new Map<string, number[]>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();

  constructor(store: Store) {
    this.#store = store;
    this.#timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
  }

  /** One request: +1 for each of its lists' names, and +1 for its user group, channel and page type. */
  count(environment: string, nowMs: number, listNames: readonly string[], userGroup: string, channel: string, pageType: string): void {
    for (const period of [`d${SEP}${dayOf(nowMs)}`, `h${SEP}${hourOf(nowMs)}`]) {
      const add = (dimension: string, value: string) => {
        const id = `${environment}${SEP}${period}${SEP}${dimension}${SEP}${value}`;
        this.#counts.set(id, (this.#counts.get(id) ?? 0) + 1);
      };
      for (const name of listNames) add('list_name', name);
      add('user_group', userGroup);
      add('channel', channel);
      add('page_type', pageType);
    }
  }

  /** The items a response showed (dense indices). */
  recommended(environment: string, nowMs: number, ix: ArrayLike<number>): void {
    const day = dayOf(nowMs);
    const id = `${environment}${SEP}${day}`;
    let items = this.#items.get(id);
    if (!items) this.#items.set(id, (items = new ItemCounts()));
    for (let i = 0; i < ix.length; i++) items.add(ix[i]!);
  }

  /** One answered request's latency, ms. */
  latency(environment: string, nowMs: number, ms: number): void {
    const bucket = latencyBucket(ms);
    for (const id of [`${environment}${SEP}d${SEP}${dayOf(nowMs)}`, `${environment}${SEP}h${SEP}${hourOf(nowMs)}`]) {
      let histogram = this.#latency.get(id);
      if (!histogram) this.#latency.set(id, (histogram = new Array<number>(LATENCY_BUCKETS).fill(0)));
      histogram[bucket]! += 1;
    }
  }

  /** Adds what was counted to LMDB; resolves once committed. */
  flush(): Promise<void> {
    if (this.#counts.size === 0 && this.#items.size === 0 && this.#latency.size === 0) return this.#flushing;
    const [counts, items, latency] = [this.#counts, this.#items, this.#latency];
    [this.#counts, this.#items, this.#latency] = [new Map(), new Map(), new Map()];
    const state = this.#store.modelState;
    // Chained: a flush never starts before the previous one committed, so no count is added twice over.
    this.#flushing = this.#flushing
      .then(() =>
        this.#store.root.transaction(() => {
          const byPeriod = new Map<string, Array<[string, number]>>();
          for (const [id, n] of counts) {
            const [environment = '', tag = 'd', period = '', dimension = '', value = ''] = id.split(SEP);
            const periodId = `${environment}${SEP}${tag}${SEP}${period}`;
            let list = byPeriod.get(periodId);
            if (!list) byPeriod.set(periodId, (list = []));
            list.push([`${dimension}${SEP}${value}${SEP}requests`, n]);
          }
          for (const [periodId, list] of byPeriod) {
            const [environment = '', tag = 'd', period = ''] = periodId.split(SEP);
            addToRollup(state, rollupKey(environment, tag as 'd' | 'h', period, 'requests'), list);
          }
          for (const [id, counted] of items) {
            const [environment = '', day = ''] = id.split(SEP);
            const ixs = counted.touched.subarray(0, counted.touchedCount);
            let top = 0;
            for (const ix of ixs) top = Math.max(top, ix);
            const countsKey = recommendedCountsKey(environment, day);
            const perIx = copyU32(state.get(countsKey) as Uint8Array | undefined);
            const sums = perIx.length > top ? perIx : new Uint32Array(top + 1);
            if (sums !== perIx) sums.set(perIx);
            for (const ix of ixs) sums[ix]! += counted.counts[ix]!;
            state.put(countsKey, Buffer.from(sums.buffer, sums.byteOffset, sums.byteLength));
            const key = coverageKey(environment, day);
            const stored = state.get(key) as Uint8Array | undefined;
            // Whole 32-bit words, so a report ORs and counts them a word at a time.
            const bits = new Uint8Array(Math.max(stored?.length ?? 0, ((top >> 5) + 1) * 4));
            if (stored) bits.set(stored);
            for (const ix of ixs) bits[ix >> 3]! |= 1 << (ix & 7);
            state.put(key, Buffer.from(bits));
          }
          for (const [id, histogram] of latency) {
            const [environment = '', tag = 'd', period = ''] = id.split(SEP);
            const key = latencyKey(environment, tag as 'd' | 'h', period);
            const stored = (state.get(key) as number[] | undefined) ?? [];
            state.put(key, histogram.map((n, i) => n + (stored[i] ?? 0)));
          }
        }),
      )
      .then(() => undefined);
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
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
}
