/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Each row is kept sorted
 * as it changes (strongest first, equal weights by lower ix), in typed arrays: an update finds
 * its entry with a native indexOf and moves it up with a binary search and one copyWithin, so a
 * flush encodes dirty rows as they are instead of sorting each one (the sort was the builder's
 * largest cost per event). A row is cut back to its strongest `maxNeighbours` once it holds
 * twice that many; at a flush the row in memory is cut to what is written (store/model.ts
 * layout), so a restart resumes from exactly the state it would have kept.
 */
import type { Store } from '../store/open.ts';
import { decodeNeighbours, encodeNeighboursInto, neighboursKey, neighboursWords } from '../store/model.ts';

const FIRST_CAPACITY = 8;

class Row {
  ix: Uint32Array;
  weight: Float64Array;
  n = 0;
  /** Changed since the last flush (listed in CooccurrenceState's dirty list). */
  dirty = false;

  constructor(capacity: number) {
    this.ix = new Uint32Array(capacity);
    this.weight = new Float64Array(capacity);
  }

  /** Adds `w` to neighbour `to` (appending it when new) and moves it to its sorted place. */
  add(to: number, w: number, maxCapacity: number): void {
    // The whole array, not a subarray view (an allocation per pair update): a first match at or
    // past n is a stale slot, so `to` is not among the n live entries.
    let p = this.ix.indexOf(to);
    if (p >= this.n) p = -1;
    if (p < 0) {
      if (this.n === this.ix.length) this.#grow(maxCapacity);
      p = this.n++;
      this.ix[p] = to;
      this.weight[p] = 0;
    }
    const weight = this.weight[p]! + w;
    // First place q in [0, p) that this entry now outranks; entries q..p-1 shift down by one.
    let lo = 0;
    let hi = p;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.weight[mid]!;
      if (other > weight || (other === weight && this.ix[mid]! < to)) lo = mid + 1;
      else hi = mid;
    }
    if (lo < p) {
      this.ix.copyWithin(lo + 1, lo, p);
      this.weight.copyWithin(lo + 1, lo, p);
    }
    this.ix[lo] = to;
    this.weight[lo] = weight;
  }

  #grow(maxCapacity: number): void {
    const capacity = Math.min(Math.max(this.ix.length * 2, FIRST_CAPACITY), maxCapacity);
    const ix = new Uint32Array(capacity);
    const weight = new Float64Array(capacity);
    ix.set(this.ix);
    weight.set(this.weight);
    this.ix = ix;
    this.weight = weight;
  }
}

export class CooccurrenceState {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  /**
   * Rows by item index, a dense array (indices count up from 0) filled with undefined, never
   * holes, so V8 keeps fast elements; a Map lookup and a Set insert per pair update were 8% of
   * the builder's time at a 600,000-event replay's steady state.
   */
  #rows: Array<Row | undefined> = [];
  #cached = 0;
  readonly #dirty: number[] = [];

  constructor(store: Store, env: string, maxNeighbours: number) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
  }

  #row(ix: number): Row {
    const rows = this.#rows;
    if (ix >= rows.length) {
      const length = Math.max(ix + 1, rows.length * 2, 1024);
      while (rows.length < length) rows.push(undefined);
    }
    let row = rows[ix];
    if (!row) {
      const stored = decodeNeighbours(this.#store.model.get(neighboursKey(this.#env, ix)));
      row = new Row(Math.max(FIRST_CAPACITY, stored.ix.length));
      // Stored rows are sorted already (by this module).
      row.ix.set(stored.ix);
      for (let i = 0; i < stored.ix.length; i++) row.weight[i] = stored.weight[i]!;
      row.n = stored.ix.length;
      rows[ix] = row;
      this.#cached++;
    }
    return row;
  }

  #add(from: number, to: number, w: number): void {
    const row = this.#row(from);
    // One slot beyond twice the bound: a full row is cut back before the next new neighbour.
    row.add(to, w, 2 * this.#maxNeighbours + 1);
    if (!row.dirty) {
      row.dirty = true;
      this.#dirty.push(from);
    }
    if (row.n > 2 * this.#maxNeighbours) row.n = this.#maxNeighbours;
  }

  addPair(a: number, b: number, w: number): void {
    if (a === b || w <= 0) return;
    this.#add(a, b, w);
    this.#add(b, a, w);
  }

  /**
   * Encodes the rows changed since the last flush; the returned function writes them (in a
   * transaction). `changed` receives their ix, for the ranking workers' row caches.
   */
  prepareFlush(changed: number[]): () => void {
    const writes: Array<[number, Buffer]> = [];
    // One buffer for every row of the flush: an ArrayBuffer per row was most of the encoding's cost.
    let words = 0;
    for (const ix of this.#dirty) {
      const row = this.#rows[ix]!;
      if (row.n > this.#maxNeighbours) row.n = this.#maxNeighbours;
      words += neighboursWords(row.n);
    }
    const out = new Uint32Array(words);
    let at = 0;
    for (const ix of this.#dirty) {
      const row = this.#rows[ix]!;
      row.dirty = false;
      writes.push([ix, encodeNeighboursInto(out, at, row.ix, row.weight, row.n)]);
      at += neighboursWords(row.n);
      changed.push(ix);
    }
    this.#dirty.length = 0;
    return () => {
      for (const [ix, bytes] of writes) this.#store.model.put(neighboursKey(this.#env, ix), bytes);
    };
  }

  trim(max: number): void {
    if (this.#cached > max) {
      this.#rows = [];
      this.#cached = 0;
    }
  }
}
