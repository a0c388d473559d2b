/**
 * @module recommend/neighbour-rows
 * A ranking worker's copy of the co-occurrence rows it has read (the model builder writes them
 * to LMDB): the strongest `rowLength` neighbours of each item, weights scaled so the strongest is
 * 1, in one arena of typed arrays. A Map of 100,000 rows of two typed arrays each was what the
 * worker's old generation held: every row a malloc'd backing store and three objects to mark,
 * the worker's mark-compacts of 60 ms under load, and a hash lookup per seed. Rows the builder
 * rewrote are dropped (their entries stay until the arena is full, then all rows are read anew).
 */
import { grown } from '../domain/grown.ts';
import { NeighbourRowReader, neighboursKey } from '../store/model.ts';
import type { Store } from '../store/open.ts';

const FIRST_ENTRIES = 1 << 16;

export class NeighbourRows {
  readonly #store: Store;
  readonly #environment: string;
  readonly #rowLength: number;
  readonly #maxEntries: number;
  /** Arena entry where each ix's row starts (−1: not read), and its length. */
  #start = new Int32Array(0);
  #length = new Uint16Array(0);
  /** The arena: entry e is neighbour ix[e] with weight weight[e]. */
  ix = new Uint32Array(FIRST_ENTRIES);
  weight = new Float32Array(FIRST_ENTRIES);
  #used = 0;
  readonly #reader = new NeighbourRowReader();

  constructor(store: Store, environment: string, rowLength: number, maxEntries: number) {
    this.#store = store;
    this.#environment = environment;
    this.#rowLength = rowLength;
    this.#maxEntries = maxEntries;
  }

  /** Where the row of `ix` starts in the arena (its length: lengthOf); read from LMDB on first use. */
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

  lengthOf(ix: number): number {
    return this.#length[ix]!;
  }

  /** The builder rewrote the row: read it anew when next needed. */
  drop(ix: number): void {
    if (ix < this.#start.length) this.#start[ix] = -1;
  }

  clear(): void {
    this.#start.fill(-1);
    this.#used = 0;
  }

  #read(ix: number): number {
    const stored = this.#reader;
    const n = stored.read(this.#store.model.getBinaryFast(neighboursKey(this.#environment, ix)));
    const kept = Math.min(n, this.#rowLength);
    if (this.#used + kept > this.#maxEntries) this.clear();
    if (this.#used + kept > this.ix.length) {
      const size = Math.max(this.#used + kept, Math.min(this.#maxEntries, this.ix.length * 2));
      this.ix = grown(this.ix, size, this.#used);
      this.weight = grown(this.weight, size, this.#used);
    }
    const start = this.#used;
    const top = kept > 0 && stored.weight(0) > 0 ? stored.weight(0) : 1;
    for (let k = 0; k < kept; k++) {
      this.ix[start + k] = stored.ix(k);
      this.weight[start + k] = stored.weight(k) / top;
    }
    this.#used += kept;
    this.#start[ix] = start;
    this.#length[ix] = kept;
    return start;
  }
}
