/**
 * @module model/request-counts
 * Writes the recommendation requests' report counters (counted on the main thread by
 * recommend/request-counter.ts, posted here about once a second) inside the model builder's
 * flush: requests per dimension and the latency histogram per UTC day and hour, and per-item
 * counts and the day's coverage bits in chunks of ix (store/report-keys.ts). Only this module
 * writes these keys, so its read-modify-write never races another writer.
 * Why on the builder's thread: these keys live in the model environment, whose free-page list the
 * builder's row rewrites keep long. A write transaction there merges it first
 * (`mdb_midl_insert`), and on the main thread that held requests for 6–15 ms at a time beside
 * events and a rebuild (perf, 100,000 items, issue 11); here it delays only the builder.
 */
import type { HourTotals, ItemTotals, RequestCounts } from '../domain/request-counts.ts';
import { copyU32 } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { addToRollup, COUNT_CHUNK_ITEMS, COVERAGE_CHUNK_ITEMS, coverageKey, dayOf, hourOf, latencyKey, recommendedCountsKey, rollupKey } from '../store/report-keys.ts';

export class RequestCountsWriter {
  #hours: HourTotals[] = [];
  #items: ItemTotals[] = [];

  add(counts: RequestCounts): void {
    this.#hours.push(...counts.hours);
    this.#items.push(...counts.items);
  }

  get pending(): boolean {
    return this.#hours.length > 0 || this.#items.length > 0;
  }

  /** Takes what was posted; the result adds it to the stored counters (inside a write transaction). */
  prepareFlush(store: Store): () => void {
    const [hours, items] = [this.#hours, this.#items];
    [this.#hours, this.#items] = [[], []];
    return () => {
      const state = store.modelState;
      for (const hour of hours) {
        for (const [tag, period] of [['d', dayOf(hour.startMs)], ['h', hourOf(hour.startMs)]] as const) {
          if (hour.counts.length > 0) addToRollup(state, rollupKey(hour.environment, tag, period, 'requests'), hour.counts);
          if (!hour.latency.some((n) => n > 0)) continue;
          const key = latencyKey(hour.environment, tag, period);
          const stored = (state.get(key) as number[] | undefined) ?? [];
          state.put(key, hour.latency.map((n, i) => n + (stored[i] ?? 0)));
        }
      }
      for (const taken of items) addItemCounts(state, taken);
    };
  }
}

/**
 * Adds a day's item counts to its stored chunks and sets their coverage bits: only the chunks
 * holding a counted ix are read and written, and a coverage chunk only when a bit is new.
 */
function addItemCounts(state: Store['modelState'], { environment, day, ix: unordered, counts: unorderedCounts }: ItemTotals): void {
  // In ix order (which is key order), counts alongside: sorted here, not on the main thread.
  const order = Uint32Array.from(unordered.keys()).sort((a, b) => unordered[a]! - unordered[b]!);
  const ixs = order.map((k) => unordered[k]!);
  const counts = order.map((k) => unorderedCounts[k]!);
  for (let at = 0; at < ixs.length; ) {
    const chunk = Math.floor(ixs[at]! / COUNT_CHUNK_ITEMS);
    const first = chunk * COUNT_CHUNK_ITEMS;
    const key = recommendedCountsKey(environment, day, chunk);
    const sums = new Uint32Array(COUNT_CHUNK_ITEMS);
    sums.set(copyU32(state.get(key) as Uint8Array | undefined).subarray(0, COUNT_CHUNK_ITEMS));
    for (; at < ixs.length && ixs[at]! < first + COUNT_CHUNK_ITEMS; at++) sums[ixs[at]! - first]! += counts[at]!;
    state.put(key, Buffer.from(sums.buffer));
  }
  for (let at = 0; at < ixs.length; ) {
    const chunk = Math.floor(ixs[at]! / COVERAGE_CHUNK_ITEMS);
    const first = chunk * COVERAGE_CHUNK_ITEMS;
    const key = coverageKey(environment, day, chunk);
    const stored = state.get(key) as Uint8Array | undefined;
    const bits = new Uint8Array(COVERAGE_CHUNK_ITEMS / 8);
    if (stored) bits.set(stored.subarray(0, bits.length));
    let added = stored === undefined;
    for (; at < ixs.length && ixs[at]! < first + COVERAGE_CHUNK_ITEMS; at++) {
      const bit = ixs[at]! - first;
      const mask = 1 << (bit & 7);
      if ((bits[bit >> 3]! & mask) !== 0) continue;
      bits[bit >> 3]! |= mask;
      added = true;
    }
    if (added) state.put(key, Buffer.from(bits.buffer));
  }
}
