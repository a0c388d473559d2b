/**
 * @module serving/neighbour-rows
 * A ranking worker's copy of the co-occurrence rows it has read (from the model builder's memory,
 * store/live-rows.ts, else from LMDB): the strongest `rowLength` neighbours of each item, weights scaled so the strongest is
 * 1, in an arena of typed-array pages. A Map of 100,000 rows of two typed arrays each was what the
 * worker's old generation held: every row a malloc'd backing store and three objects to mark,
 * the worker's mark-compacts of 60 ms under load, and a hash lookup per seed. Rows the builder
 * rewrote are dropped (their entries stay until the arena is full, then all rows are read anew).
 * Pages, not one array that doubles: while events arrive the builder's rewrites fill the arena,
 * and each doubling copied it whole inside one request (at 10M entries, ~70 ms of memmove and
 * page faults: the 100 ms stall seen at 4 connections beside events and a rebuild, issue 11).
 */
import { NeighbourRowReader, neighboursKey } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import { grown } from '../domain/grown.ts';
import type { LiveRowReader } from '../store/live-rows.ts';
import { RowSorter } from '../store/row-sorter.ts';

/** Entries per page (256 KB per array): an address is page << PAGE_BITS | entry. */
const PAGE_BITS = 16;
const PAGE_MASK = (1 << PAGE_BITS) - 1;

export class NeighbourRows {
  readonly #store: Store;
  readonly #environment: string;
  readonly #rowLength: number;
  /** Entries per page: a row never spans two. */
  readonly #pageEntries: number;
  readonly #maxPages: number;
  /** Arena address where each ix's row starts (−1: not read), and its length. */
  #start = new Int32Array(0);
  #length = new Uint16Array(0);
  /** Per page, neighbour ix and weight of each entry; pages stay allocated across clear(). */
  readonly #ixPages: Uint32Array[] = [];
  readonly #weightPages: Float32Array[] = [];
  /** The page being filled and its next free entry. */
  #page = 0;
  #used = 0;
  readonly #reader = new NeighbourRowReader();
  readonly #sorter = new RowSorter(256);

  readonly #live: LiveRowReader | undefined;

  /** `live`: the rows the builder holds, in shared memory, read first. */
  constructor(store: Store, environment: string, rowLength: number, maxEntries: number, live?: LiveRowReader) {
    this.#store = store;
    this.#live = live;
    this.#environment = environment;
    this.#rowLength = rowLength;
    this.#pageEntries = Math.min(1 << PAGE_BITS, maxEntries);
    if (rowLength > this.#pageEntries) throw new RangeError(`a row of ${rowLength} entries does not fit a page of ${this.#pageEntries}`);
    this.#maxPages = Math.max(1, Math.floor(maxEntries / this.#pageEntries));
  }

  /** The arena address of `ix`'s row (its entries: ixOf, weightOf, offsetOf; length: lengthOf); read from LMDB on first use. */
  row(ix: number): number {
    if (ix >= this.#start.length) {
      const [had, size] = [this.#start.length, Math.max(ix + 1, this.#start.length * 2, 1024)];
      this.#start = grown(this.#start, size);
      this.#start.fill(-1, had);
      this.#length = grown(this.#length, size);
    }
    const at = this.#start[ix]!;
    return at >= 0 ? at : this.#read(ix);
  }

  /** The neighbour ix of the page holding the row at `at`. */
  ixOf(at: number): Uint32Array {
    return this.#ixPages[at >>> PAGE_BITS]!;
  }

  /** The weights of the page holding the row at `at`. */
  weightOf(at: number): Float32Array {
    return this.#weightPages[at >>> PAGE_BITS]!;
  }

  /** Where the row at `at` starts in its page. */
  offsetOf(at: number): number {
    return at & PAGE_MASK;
  }

  lengthOf(ix: number): number {
    return this.#length[ix]!;
  }

  /** The builder rewrote the row: read it anew when next needed. */
  drop(ix: number): void {
    if (ix < this.#start.length) this.#start[ix] = -1;
  }

  clear(): void {
    this.#start.fill(-1);
    this.#page = 0;
    this.#used = 0;
  }

  #read(ix: number): number {
    const stored = this.#reader;
    let n = this.#live ? this.#live.read(ix, stored) : -1;
    if (n < 0) {
      n = stored.read(this.#store.model.getBinaryFast(neighboursKey(this.#environment, ix)));
      // Stored in no order (builder/cooccurrence.ts): the strongest first, as the builder's memory reads.
      stored.sortWith(this.#sorter);
    }
    const kept = Math.min(n, this.#rowLength);
    if (this.#used + kept > this.#pageEntries) {
      if (this.#page + 1 < this.#maxPages) [this.#page, this.#used] = [this.#page + 1, 0];
      else this.clear();
    }
    if (this.#page === this.#ixPages.length) {
      this.#ixPages.push(new Uint32Array(this.#pageEntries));
      this.#weightPages.push(new Float32Array(this.#pageEntries));
    }
    const ixs = this.#ixPages[this.#page]!;
    const weights = this.#weightPages[this.#page]!;
    const start = this.#used;
    const top = kept > 0 && stored.weight(0) > 0 ? stored.weight(0) : 1;
    for (let k = 0; k < kept; k++) {
      ixs[start + k] = stored.ix(k);
      weights[start + k] = stored.weight(k) / top;
    }
    this.#used += kept;
    const at = (this.#page << PAGE_BITS) | start;
    this.#start[ix] = at;
    this.#length[ix] = kept;
    return at;
  }
}
