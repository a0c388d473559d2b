/**
 * @module builder/request-counts
 * Writes the recommendation requests' report counters (counted on the main thread by
 * main-thread/request-counter.ts, posted here about once a second) inside the report counters'
 * thread's flush, in the reports environment: requests per dimension and the latency histogram
 * per UTC day and hour, and per-item counts and the day's coverage bits in chunks of ix
 * (store/report-keys.ts). Only this module writes these keys, so what it holds in memory is what
 * is stored plus what it has not written. Not on the main thread: when these keys lived in the
 * model environment, a write transaction there merged the free-page list the builder's row
 * rewrites keep long (`mdb_midl_insert`), and held requests for 6–15 ms at a time beside events
 * and a rebuild (perf, 100,000 items, issue 11). They then rode on the model's flushes, until the
 * report counters' own commits in that environment were seen paying the same (store/open.ts).
 *
 * Each day's per-item counts and coverage bits are held whole (4 bytes and a bit per item), each
 * chunk read from LMDB once, on its first count of the day; a flush writes at most
 * CHUNKS_PER_FLUSH of the chunks counted in, oldest first, the rest in the next flushes. Read,
 * added to and written back all at once, a ten-second post of counts at 1,000,000 items rewrote
 * ~3,900 chunks in one commit: 28 ms of CPU per flush on average, 3 µs per recommendation
 * request (now 0.9 ms and 1.1 µs; issue 12 asks periodic commits for under 1 ms each).
 */
import type { HourTotals, ItemTotals, RequestCounts } from '../domain/request-counts.ts';
import { grown, quarterMore } from '../domain/grown.ts';
import { ItemCountChunks } from './item-count-chunks.ts';
import type { Store } from '../store/open.ts';
import { addToRollup, COVERAGE_CHUNK_ITEMS, coverageKey, dayOf, hourOf, latencyKey, recommendedCountsKey, rollupKey } from '../store/report-keys.ts';

/**
 * Chunks (1 KB each) a flush writes at most. Served at ~10,000 requests/s (CPU per flush, mean):
 * 16, 32, 128 and 512 chunks 0.78, 0.91, 1.5 and 3.1 ms at 1,000,000 items, the builder's CPU per
 * request the same (~1.1 µs) at every bound; 1, 8, 32 and 128 chunks 0.55, 0.69, 0.86 and 1.1 ms
 * at 100,000. At 1,000,000 items the ~3,900 chunks a ten-second post touches are written within
 * ~12 s at the builder's 100 ms pace; what is not written yet waits in memory (reporting, not
 * billing).
 */
export const CHUNKS_PER_FLUSH = 32;

/** A coverage chunk's state bits (DayItems): its stored value read; set since it was last written. */
const READ = 1;
const UNWRITTEN = 2;

export class RequestCountsWriter {
  readonly #store: Store;
  #hours: HourTotals[] = [];
  /** By environment, then day. */
  readonly #days = new Map<string, Map<string, DayItems>>();

  constructor(store: Store) {
    this.#store = store;
  }

  add(counts: RequestCounts): void {
    this.#hours.push(...counts.hours);
    for (const taken of counts.items) this.#day(taken.environment, taken.day).add(taken);
  }

  #day(environment: string, day: string): DayItems {
    let days = this.#days.get(environment);
    if (!days) this.#days.set(environment, (days = new Map()));
    let items = days.get(day);
    if (!items) days.set(day, (items = new DayItems(this.#store, environment, day)));
    return items;
  }

  /** Whether anything counted is not written yet. */
  get pending(): boolean {
    if (this.#hours.length > 0) return true;
    for (const days of this.#days.values()) for (const items of days.values()) if (items.pending) return true;
    return false;
  }

  /**
   * Takes the hours posted and up to `chunks` unwritten item chunks (Infinity: all, as the last
   * flush before a stop takes them); the result writes them (inside a write transaction, and
   * again if the transaction is retried).
   */
  prepareFlush(chunks = CHUNKS_PER_FLUSH): () => void {
    const hours = this.#hours;
    this.#hours = [];
    const itemWrites: Array<() => void> = [];
    let budget = chunks;
    for (const days of this.#days.values()) {
      for (const items of days.values()) if (budget > 0 && items.pending) budget -= items.take(budget, itemWrites);
      // A past day is dropped once written; the newest stays, its chunks read already.
      const newest = [...days.keys()].sort().at(-1);
      for (const [day, items] of days) if (day !== newest && !items.pending) days.delete(day);
    }
    const state = this.#store.reportState;
    return () => {
      for (const hour of hours) {
        for (const [tag, period] of [['d', dayOf(hour.startMs)], ['h', hourOf(hour.startMs)]] as const) {
          if (hour.counts.length > 0) addToRollup(state, rollupKey(hour.environment, tag, period, 'requests'), hour.counts);
          if (!hour.latency.some((n) => n > 0)) continue;
          const key = latencyKey(hour.environment, tag, period);
          const stored = (state.get(key) as number[] | undefined) ?? [];
          state.put(key, hour.latency.map((n, i) => n + (stored[i] ?? 0)));
        }
      }
      for (const write of itemWrites) write();
    };
  }
}

/**
 * One environment's per-item counts (builder/item-count-chunks.ts) and coverage bits of one day,
 * whole. A coverage chunk's stored value is read before its first bit is set, so what is held is
 * always the stored value plus what came since.
 */
class DayItems {
  readonly #store: Store;
  readonly #environment: string;
  readonly #day: string;
  readonly #counts: ItemCountChunks;
  #coverage = new Uint8Array(0);
  /** Per coverage chunk: bit 0 read from LMDB, bit 1 set since written. */
  #coverageState = new Uint8Array(0);
  /** Coverage chunks set since written, oldest first (written before counts: they are few). */
  readonly #coverageQueue: number[] = [];

  constructor(store: Store, environment: string, day: string) {
    this.#store = store;
    this.#environment = environment;
    this.#day = day;
    this.#counts = new ItemCountChunks(store.reportState, (chunk) => recommendedCountsKey(environment, day, chunk));
  }

  get pending(): boolean {
    return this.#counts.pending || this.#coverageQueue.length > 0;
  }

  add({ ix, counts }: ItemTotals): void {
    for (let i = 0; i < ix.length; i++) {
      const item = ix[i]!;
      if (this.#counts.add(item, counts[i]!) === 0 && counts[i]! > 0) this.#cover(item);
    }
  }

  #cover(item: number): void {
    const chunk = Math.floor(item / COVERAGE_CHUNK_ITEMS);
    if (chunk >= this.#coverageState.length) {
      const chunks = quarterMore(this.#coverageState.length, chunk + 1);
      this.#coverage = grown(this.#coverage, (chunks * COVERAGE_CHUNK_ITEMS) / 8);
      this.#coverageState = grown(this.#coverageState, chunks);
    }
    if ((this.#coverageState[chunk]! & READ) === 0) this.#readCoverage(chunk);
    const mask = 1 << (item & 7);
    if ((this.#coverage[item >> 3]! & mask) !== 0) return;
    this.#coverage[item >> 3]! |= mask;
    if ((this.#coverageState[chunk]! & UNWRITTEN) === 0) {
      this.#coverageState[chunk]! |= UNWRITTEN;
      this.#coverageQueue.push(chunk);
    }
  }

  #readCoverage(chunk: number): void {
    this.#coverageState[chunk]! |= READ;
    const stored = this.#store.reportState.get(coverageKey(this.#environment, this.#day, chunk)) as Uint8Array | undefined;
    const bytes = COVERAGE_CHUNK_ITEMS / 8;
    if (stored) this.#coverage.set(stored.subarray(0, bytes), chunk * bytes);
  }

  /** Takes up to `budget` chunks to write (coverage first); adds their writes to `out`; returns how many. */
  take(budget: number, out: Array<() => void>): number {
    const state = this.#store.reportState;
    // In key order: LMDB then walks its leaf pages in order (builder/cooccurrence.ts measured it).
    const coverage = this.#coverageQueue.splice(0, budget).sort((a, b) => a - b);
    for (const chunk of coverage) this.#coverageState[chunk]! &= ~UNWRITTEN;
    // A view over what is held, read when the transaction runs: nothing changes it before.
    const coverageBuffer = this.#coverage.buffer;
    const counts = this.#counts.take(budget - coverage.length);
    out.push(() => {
      const coverageBytes = COVERAGE_CHUNK_ITEMS / 8;
      for (const chunk of coverage) state.put(coverageKey(this.#environment, this.#day, chunk), Buffer.from(coverageBuffer, chunk * coverageBytes, coverageBytes));
      counts.write();
    });
    return coverage.length + counts.taken;
  }
}
