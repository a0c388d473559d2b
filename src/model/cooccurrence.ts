/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Rows live in flat typed
 * heaps (no object or typed array per row: allocating and growing those was ~5% of the builder,
 * issue 12), unsorted, each with a small open-addressing table from neighbour to slot, so a pair
 * update is a hash probe and an add. A row is cut back to its strongest `maxNeighbours` (equal
 * weights: lower ix first) only when it reaches twice that: where the order of the events says,
 * never where a flush falls. Weights are summed in f32, what is stored. A flush writes each
 * changed row whole and in order, up to twice `maxNeighbours` long (readers take the strongest
 * they need), so memory equals LMDB and a restart (or a trim) resumes from exactly the state an
 * uninterrupted builder keeps. Before, a flush also cut rows to the bound and rounded their f64
 * sums, and flushes come every 100 ms of wall time: the same events posted twice gave rows with
 * other weak neighbours, and 17 to 23 of MovieLens's 943 lists in another order (issue 13).
 * Keeping every row sorted as it changed (indexOf over up to 401 entries, binary search,
 * copyWithin) was ~22% of the builder's time at a 1M-event replay.
 */
import { grown } from '../domain/grown.ts';
import type { Store } from '../store/open.ts';
import { encodeNeighboursInto, NeighbourRowReader, neighboursKey, neighboursWords } from '../store/model.ts';

const FIRST_CAPACITY = 8;
/** Not loaded (row metadata). */
const NONE = -1;
/** 2^32: the sort key packs an integer weight above a u32 ix. */
const TWO_32 = 4294967296;
/** Largest weight the packed key holds exactly: key < 2^53. */
const MAX_PACKED_WEIGHT = 2 ** 21 - 1;
/** Fibonacci hashing multiplier (2^32 / golden ratio) as an i32. */
const HASH_MUL = -1640531535;
/** Most slots a row's u16 table entries (slot + 1) can name; config/schema.ts caps maxNeighbours at 10,000 (20,001 slots). */
const MAX_ROW_SLOTS = 0xffff;

export class CooccurrenceState {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  /** Slot capacity of each size class: powers of two from 8, the last one beyond twice the bound. */
  readonly #classCap: number[] = [];
  /** Hash table size of each class: a power of two at least twice its capacity (probes stay short). */
  readonly #classTable: number[] = [];
  /** Whether rows may be stored: false for an environment the builder has never written, so a first touch skips the read. */
  #mayExist: boolean;

  // Per row, by item index.
  #off = new Int32Array(0).fill(NONE);
  #toff = new Int32Array(0);
  #cls = new Uint8Array(0);
  #n = new Int32Array(0);
  #isDirty = new Uint8Array(0);
  readonly #dirty: number[] = [];
  #cached = 0;

  // Heaps: neighbour ix and summed weight per slot; per table entry, slot + 1 (0 empty).
  #ix = new Uint32Array(1 << 16);
  #w = new Float64Array(1 << 16);
  #used = 0;
  #table = new Uint16Array(1 << 17);
  #tableUsed = 0;
  /** Free blocks per class, as (off, toff) pairs. */
  #free: number[][] = [];
  // Sort scratch, one row long (reused: no array per sorted row).
  readonly #keys: Float64Array;
  readonly #order: Uint32Array;
  readonly #sortedIx: Uint32Array;
  readonly #sortedW: Float64Array;
  /** Heap offset of the row the comparator sort is ordering. */
  #sortOff = 0;
  /** Strongest first, equal weights by lower ix; made once, not a closure per sort. */
  readonly #bySlot = (a: number, b: number): number => {
    const off = this.#sortOff;
    return this.#w[off + b]! - this.#w[off + a]! || this.#ix[off + a]! - this.#ix[off + b]!;
  };
  readonly #reader = new NeighbourRowReader();

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, maxNeighbours: number, fresh = false) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
    this.#mayExist = !fresh;
    // One slot beyond twice the bound: a full row is cut back before the next new neighbour.
    const maxCapacity = 2 * maxNeighbours + 1;
    if (maxCapacity > MAX_ROW_SLOTS) throw new RangeError(`maxNeighbours ${maxNeighbours} is over ${(MAX_ROW_SLOTS - 1) / 2}: row tables hold u16 slots`);
    for (let cap = FIRST_CAPACITY; ; cap *= 2) {
      const c = Math.min(cap, maxCapacity);
      this.#classCap.push(c);
      let t = 2;
      while (t < 2 * c) t *= 2;
      this.#classTable.push(t);
      this.#free.push([]);
      if (c === maxCapacity) break;
    }
    this.#keys = new Float64Array(maxCapacity);
    this.#order = new Uint32Array(maxCapacity);
    this.#sortedIx = new Uint32Array(maxCapacity);
    this.#sortedW = new Float64Array(maxCapacity);
  }

  #ensureRows(ix: number): void {
    if (ix < this.#off.length) return;
    const length = Math.max(ix + 1, this.#off.length * 2, 1024);
    const off = new Int32Array(length).fill(NONE);
    off.set(this.#off);
    this.#off = off;
    this.#toff = grown(this.#toff, length);
    this.#cls = grown(this.#cls, length);
    this.#n = grown(this.#n, length);
    this.#isDirty = grown(this.#isDirty, length);
  }

  /** Gives row `r` an empty block of class `cls` (its table cleared). */
  #alloc(r: number, cls: number): void {
    const free = this.#free[cls]!;
    const tsize = this.#classTable[cls]!;
    let off: number;
    let toff: number;
    if (free.length > 0) {
      toff = free.pop()!;
      off = free.pop()!;
    } else {
      const cap = this.#classCap[cls]!;
      off = this.#used;
      toff = this.#tableUsed;
      this.#used += cap;
      this.#tableUsed += tsize;
      if (this.#used > this.#ix.length) {
        const size = Math.max(this.#used, this.#ix.length * 2);
        this.#ix = grown(this.#ix, size);
        this.#w = grown(this.#w, size);
      }
      if (this.#tableUsed > this.#table.length) this.#table = grown(this.#table, Math.max(this.#tableUsed, this.#table.length * 2));
    }
    this.#table.fill(0, toff, toff + tsize);
    this.#off[r] = off;
    this.#toff[r] = toff;
    this.#cls[r] = cls;
  }

  #release(r: number): void {
    this.#free[this.#cls[r]!]!.push(this.#off[r]!, this.#toff[r]!);
  }

  /** Fills row r's table from its n slots (after a move, a sort or a cut). */
  #rehash(r: number): void {
    const toff = this.#toff[r]!;
    const mask = this.#classTable[this.#cls[r]!]! - 1;
    const table = this.#table;
    const ix = this.#ix;
    table.fill(0, toff, toff + mask + 1);
    const off = this.#off[r]!;
    const n = this.#n[r]!;
    for (let s = 0; s < n; s++) {
      let h = (Math.imul(ix[off + s]!, HASH_MUL) >>> 16) & mask;
      while (table[toff + h] !== 0) h = (h + 1) & mask;
      table[toff + h] = s + 1;
    }
  }

  /** Loads row r (from LMDB when it may exist) into a block of its size. */
  #load(r: number): void {
    const stored = this.#reader;
    // Written under a larger maxNeighbours (the configuration changed): rows are stored strongest
    // first, so the row keeps its strongest entries, as the cut under the new bound keeps them.
    const storedCount = stored.read(this.#mayExist ? this.#store.model.getBinaryFast(neighboursKey(this.#env, r)) : undefined);
    const n = storedCount > 2 * this.#maxNeighbours ? this.#maxNeighbours : storedCount;
    let cls = 0;
    while (this.#classCap[cls]! < n) cls++;
    this.#alloc(r, cls);
    const off = this.#off[r]!;
    for (let i = 0; i < n; i++) {
      this.#ix[off + i] = stored.ix(i);
      this.#w[off + i] = stored.weight(i);
    }
    this.#n[r] = n;
    if (n > 0) this.#rehash(r);
    this.#cached++;
  }

  /** Moves row r to the next class up. */
  #growRow(r: number): void {
    const oldOff = this.#off[r]!;
    const n = this.#n[r]!;
    this.#release(r);
    this.#alloc(r, this.#cls[r]! + 1);
    const off = this.#off[r]!;
    this.#ix.copyWithin(off, oldOff, oldOff + n);
    this.#w.copyWithin(off, oldOff, oldOff + n);
    this.#rehash(r);
  }

  /**
   * Writes row r's slots in order (strongest first, equal weights by lower ix) to #sortedIx and
   * #sortedW, leaving the row itself (and so its table) as it was. Integer weights (the configured
   * ones, and their sums) are packed with the ix into one f64 key and sorted natively; others take
   * a comparator sort of slot numbers.
   */
  #sortRow(r: number): void {
    const off = this.#off[r]!;
    const n = this.#n[r]!;
    const ix = this.#ix;
    const w = this.#w;
    const outIx = this.#sortedIx;
    const outW = this.#sortedW;
    const keys = this.#keys;
    let packed = true;
    for (let s = 0; s < n && packed; s++) {
      const weight = w[off + s]!;
      packed = weight <= MAX_PACKED_WEIGHT && Number.isInteger(weight);
      // Ascending keys are weakest first; the higher ix of equal weights has the lower key.
      keys[s] = weight * TWO_32 + (TWO_32 - 1 - ix[off + s]!);
    }
    if (packed) {
      keys.subarray(0, n).sort();
      for (let s = 0; s < n; s++) {
        const key = keys[n - 1 - s]!;
        const weight = Math.floor(key / TWO_32);
        outW[s] = weight;
        outIx[s] = TWO_32 - 1 - (key - weight * TWO_32);
      }
      return;
    }
    const order = this.#order;
    for (let s = 0; s < n; s++) order[s] = s;
    this.#sortOff = off;
    order.subarray(0, n).sort(this.#bySlot);
    for (let s = 0; s < n; s++) {
      outIx[s] = ix[off + order[s]!]!;
      outW[s] = w[off + order[s]!]!;
    }
  }

  /** After #sortRow(r): keeps the strongest maxNeighbours as row r (in order) and rehashes it. */
  #keepSorted(r: number): void {
    const off = this.#off[r]!;
    const n = Math.min(this.#n[r]!, this.#maxNeighbours);
    for (let s = 0; s < n; s++) {
      this.#ix[off + s] = this.#sortedIx[s]!;
      this.#w[off + s] = this.#sortedW[s]!;
    }
    this.#n[r] = n;
    this.#rehash(r);
  }

  #add(from: number, to: number, weight: number): void {
    this.#ensureRows(from);
    if (this.#off[from] === NONE) this.#load(from);
    if (this.#isDirty[from] === 0) {
      this.#isDirty[from] = 1;
      this.#dirty.push(from);
    }
    let toff = this.#toff[from]!;
    let mask = this.#classTable[this.#cls[from]!]! - 1;
    const table = this.#table;
    let h = (Math.imul(to, HASH_MUL) >>> 16) & mask;
    for (let e = table[toff + h]!; e !== 0; e = table[toff + h]!) {
      const s = this.#off[from]! + e - 1;
      if (this.#ix[s] === to) {
        this.#w[s] = Math.fround(this.#w[s]! + weight);
        return;
      }
      h = (h + 1) & mask;
    }
    let n = this.#n[from]!;
    if (n === this.#classCap[this.#cls[from]!]) {
      this.#growRow(from);
      toff = this.#toff[from]!;
      mask = this.#classTable[this.#cls[from]!]! - 1;
      h = (Math.imul(to, HASH_MUL) >>> 16) & mask;
      while (this.#table[toff + h] !== 0) h = (h + 1) & mask;
    }
    const off = this.#off[from]!;
    this.#ix[off + n] = to;
    this.#w[off + n] = Math.fround(weight);
    this.#table[toff + h] = ++n;
    this.#n[from] = n;
    if (n > 2 * this.#maxNeighbours) this.#cut(from);
  }

  /** Keeps row r's strongest maxNeighbours. */
  #cut(r: number): void {
    this.#sortRow(r);
    this.#keepSorted(r);
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
    // In ix order, which is key order: LMDB then walks its leaf pages in order. 90,000 rows put in
    // random order took ~3.5 us of CPU each, in order ~2 us (and half the wall time); the sort ~1 ms.
    const dirty = Uint32Array.from(this.#dirty).sort();
    this.#dirty.length = 0;
    // One buffer for every row of the flush: an ArrayBuffer per row was most of the encoding's cost.
    let words = 0;
    for (const r of dirty) words += neighboursWords(this.#n[r]!);
    const out = new Uint32Array(words);
    let at = 0;
    for (const r of dirty) {
      this.#isDirty[r] = 0;
      // The whole row, in order; memory is not cut here (see the module comment).
      this.#sortRow(r);
      const n = this.#n[r]!;
      writes.push([r, encodeNeighboursInto(out, at, this.#sortedIx, this.#sortedW, n)]);
      at += neighboursWords(n);
      changed.push(r);
    }
    return () => {
      for (const [ix, bytes] of writes) this.#store.model.put(neighboursKey(this.#env, ix), bytes);
    };
  }

  /** Drops every row (all written) when more than `max` are loaded; later touches read them back. */
  trim(max: number): void {
    if (this.#cached <= max) return;
    this.#off.fill(NONE);
    this.#used = 0;
    this.#tableUsed = 0;
    for (const free of this.#free) free.length = 0;
    this.#cached = 0;
    this.#mayExist = true;
  }
}
