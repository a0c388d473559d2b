/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Each row is an
 * open-addressing table of (neighbour, weight) entries in paged typed heaps (no object or typed
 * array per row: allocating and growing those was ~5% of the builder, issue 12), so a pair update
 * is a hash probe and an add in one cache line. A row is cut back to its strongest `maxNeighbours` (equal
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
import type { Store } from '../store/open.ts';
import { selectLargest } from '../domain/select-largest.ts';
import { NeighbourRowReader, neighboursKey, neighboursWords } from '../store/model.ts';
import type { RowBoardWriter } from '../store/row-board.ts';

/** Not loaded (row metadata). */
const NONE = -1;
/** 2^32: the sort key packs an integer weight above a u32 ix. */
const TWO_32 = 4294967296;
/** Largest weight the packed key holds exactly: key < 2^53. */
const MAX_PACKED_WEIGHT = 2 ** 21 - 1;
/** Fibonacci hashing multiplier (2^32 / golden ratio) as an i32; a table of 2^b entries takes the top b bits. */
const HASH_MUL = -1640531535;
/** Most slots a row may hold (config/schema.ts caps maxNeighbours at 10,000: 20,001 slots); its table (2^17 entries) fits a page. */
const MAX_ROW_SLOTS = 0xffff;
/** Table entries per heap page (8 bytes each: 8 MB). A row's table never spans two pages. */
const PAGE_BITS = 20;
const PAGE_ENTRIES = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_ENTRIES - 1;
/** Per row in #meta: its table's address (page << PAGE_BITS | entry, NONE when not loaded), size class, entry count, dirty flag. */
const META = 4;
const [ADDR, CLS, COUNT, DIRTY] = [0, 1, 2, 3];

export class CooccurrenceState {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  /** Slot capacity of each size class: half its table, the last one beyond twice the bound. */
  readonly #classCap: number[] = [];
  /** log2 of each class's table size: at least twice its capacity, so probes stay short. */
  readonly #classBits: number[] = [];
  /** Whether rows may be stored: false for an environment the builder has never written, so a first touch skips the read. */
  #mayExist: boolean;

  /** Row metadata, META words per item index: one cache line for everything a pair update asks of its row. */
  #meta = new Int32Array(0);
  readonly #dirty: number[] = [];
  #cached = 0;

  /**
   * Each row is an open-addressing table whose entries hold the neighbour (ix + 1; 0 empty) and its
   * summed f32 weight side by side: a pair update reads one cache line. The tables live in pages
   * that are never copied (doubling one heap was ~4% of a 1M-event replay, and each row move
   * another ~5%). Per page, its words as u32 (keys) and as f32 (weights) over the same memory.
   */
  readonly #keyPages: Uint32Array[] = [];
  readonly #weightPages: Float32Array[] = [];
  /** Next free entry of the last page. */
  #pageUsed = PAGE_ENTRIES;
  /** Free tables per class, as addresses. */
  #free: number[][] = [];
  // Sort scratch, one row long (reused: no array per sorted row).
  readonly #keys: Float64Array;
  readonly #order: Uint32Array;
  readonly #gatheredIx: Uint32Array;
  readonly #gatheredW: Float32Array;
  readonly #sortedIx: Uint32Array;
  readonly #sortedW: Float32Array;
  /** Strongest first, equal weights by lower ix; made once, not a closure per sort. */
  readonly #bySlot = (a: number, b: number): number => this.#gatheredW[b]! - this.#gatheredW[a]! || this.#gatheredIx[a]! - this.#gatheredIx[b]!;
  /** A slot's packed key (#packKeys), for selectLargest. */
  readonly #packedKey = (s: number): number => this.#keys[s]!;
  readonly #reader = new NeighbourRowReader();
  /** Where changed rows are published between flushes (store/row-board.ts); none: each flush writes them to LMDB. */
  readonly #board: RowBoardWriter | undefined;
  /** What the last flush leaves the board once its commit is readable (flushReadable). */
  #boardAfterFlush: 'flip' | 'clear' | undefined;

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, maxNeighbours: number, fresh = false, board?: RowBoardWriter) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
    this.#mayExist = !fresh;
    this.#board = board;
    // One slot beyond twice the bound: a full row is cut back before the next new neighbour.
    const maxCapacity = 2 * maxNeighbours + 1;
    if (maxCapacity > MAX_ROW_SLOTS) throw new RangeError(`maxNeighbours ${maxNeighbours} is over ${(MAX_ROW_SLOTS - 1) / 2}: a row's table would outgrow a heap page`);
    // Capacities 8, 32, 128, ...: a row that grows moves 3 times on its way to 201 entries, not 5.
    for (let cap = 8; ; cap *= 4) {
      const c = Math.min(cap, maxCapacity);
      let bits = 1;
      while (1 << bits < 2 * c) bits++;
      this.#classCap.push(c);
      this.#classBits.push(bits);
      this.#free.push([]);
      if (c === maxCapacity) break;
    }
    this.#keys = new Float64Array(maxCapacity);
    this.#order = new Uint32Array(maxCapacity);
    this.#gatheredIx = new Uint32Array(maxCapacity);
    this.#gatheredW = new Float32Array(maxCapacity);
    this.#sortedIx = new Uint32Array(maxCapacity);
    this.#sortedW = new Float32Array(maxCapacity);
  }

  #ensureRows(ix: number): void {
    if (ix * META < this.#meta.length) return;
    const rows = Math.max(ix + 1, (this.#meta.length / META) * 2, 1024);
    const meta = new Int32Array(rows * META);
    meta.set(this.#meta);
    for (let r = this.#meta.length / META; r < rows; r++) meta[r * META + ADDR] = NONE;
    this.#meta = meta;
  }

  /** Gives row `r` an empty table of class `cls`. */
  #alloc(r: number, cls: number): void {
    const size = 1 << this.#classBits[cls]!;
    let addr = this.#free[cls]!.pop();
    if (addr === undefined) {
      if (this.#pageUsed + size > PAGE_ENTRIES) {
        // A fresh ArrayBuffer is zeroed (empty tables) and its pages are touched only as tables are used.
        const words = new Uint32Array(2 * PAGE_ENTRIES);
        this.#keyPages.push(words);
        this.#weightPages.push(new Float32Array(words.buffer));
        this.#pageUsed = 0;
      }
      addr = ((this.#keyPages.length - 1) << PAGE_BITS) | this.#pageUsed;
      this.#pageUsed += size;
    } else {
      this.#keyPages[addr >>> PAGE_BITS]!.fill(0, 2 * (addr & PAGE_MASK), 2 * ((addr & PAGE_MASK) + size));
    }
    const m = r * META;
    this.#meta[m + ADDR] = addr;
    this.#meta[m + CLS] = cls;
    this.#meta[m + COUNT] = 0;
  }

  /** Puts a neighbour known to be absent into row r's table (room checked by the caller). */
  #insert(r: number, to: number, weight: number): void {
    const m = r * META;
    const addr = this.#meta[m + ADDR]!;
    const bits = this.#classBits[this.#meta[m + CLS]!]!;
    const mask = (1 << bits) - 1;
    const keys = this.#keyPages[addr >>> PAGE_BITS]!;
    const base = 2 * (addr & PAGE_MASK);
    let h = Math.imul(to, HASH_MUL) >>> (32 - bits);
    while (keys[base + 2 * h] !== 0) h = (h + 1) & mask;
    keys[base + 2 * h] = to + 1;
    this.#weightPages[addr >>> PAGE_BITS]![base + 2 * h + 1] = weight;
    this.#meta[m + COUNT]!++;
  }

  /** Copies row r's entries (table order) to #gatheredIx/#gatheredW; returns their count. */
  #gather(r: number): number {
    const m = r * META;
    const addr = this.#meta[m + ADDR]!;
    const size = 1 << this.#classBits[this.#meta[m + CLS]!]!;
    const keys = this.#keyPages[addr >>> PAGE_BITS]!;
    const weights = this.#weightPages[addr >>> PAGE_BITS]!;
    const base = 2 * (addr & PAGE_MASK);
    let n = 0;
    for (let e = base; e < base + 2 * size; e += 2) {
      const key = keys[e]!;
      if (key === 0) continue;
      this.#gatheredIx[n] = key - 1;
      this.#gatheredW[n++] = weights[e + 1]!;
    }
    return n;
  }

  /** Loads row r (from LMDB when it may exist) into a table of its size. */
  #load(r: number): void {
    const stored = this.#reader;
    // Written under a larger maxNeighbours (the configuration changed): rows are stored strongest
    // first, so the row keeps its strongest entries, as the cut under the new bound keeps them.
    const storedCount = stored.read(this.#mayExist ? this.#store.model.getBinaryFast(neighboursKey(this.#env, r)) : undefined);
    const n = storedCount > 2 * this.#maxNeighbours ? this.#maxNeighbours : storedCount;
    let cls = 0;
    while (this.#classCap[cls]! < n) cls++;
    this.#alloc(r, cls);
    for (let i = 0; i < n; i++) this.#insert(r, stored.ix(i), stored.weight(i));
    this.#cached++;
  }

  /** Gives row r an empty table of class `cls`, its old one freed (a freed table is cleared when reused). */
  #reallocate(r: number, cls: number): void {
    this.#free[this.#meta[r * META + CLS]!]!.push(this.#meta[r * META + ADDR]!);
    this.#alloc(r, cls);
  }

  /** Moves row r's entries to a table of the next class up. */
  #grow(r: number): void {
    const n = this.#gather(r);
    this.#reallocate(r, this.#meta[r * META + CLS]! + 1);
    for (let s = 0; s < n; s++) this.#insert(r, this.#gatheredIx[s]!, this.#gatheredW[s]!);
  }

  /**
   * Writes row r's entries in order (strongest first, equal weights by lower ix) to #sortedIx and
   * #sortedW; returns their count. Integer weights (the configured ones, and their sums) are
   * packed with the ix into one f64 key and sorted natively; others take a comparator sort.
   */
  #sortRow(r: number): number {
    const n = this.#gather(r);
    const ix = this.#gatheredIx;
    const w = this.#gatheredW;
    const outIx = this.#sortedIx;
    const outW = this.#sortedW;
    const keys = this.#keys;
    if (this.#packKeys(n)) {
      keys.subarray(0, n).sort();
      for (let s = 0; s < n; s++) {
        const key = keys[n - 1 - s]!;
        const weight = Math.floor(key / TWO_32);
        outW[s] = weight;
        outIx[s] = TWO_32 - 1 - (key - weight * TWO_32);
      }
      return n;
    }
    const order = this.#order;
    for (let s = 0; s < n; s++) order[s] = s;
    order.subarray(0, n).sort(this.#bySlot);
    for (let s = 0; s < n; s++) {
      outIx[s] = ix[order[s]!]!;
      outW[s] = w[order[s]!]!;
    }
    return n;
  }

  #add(from: number, to: number, weight: number): void {
    this.#ensureRows(from);
    const m = from * META;
    const meta = this.#meta;
    if (meta[m + ADDR] === NONE) this.#load(from);
    if (meta[m + DIRTY] === 0) {
      meta[m + DIRTY] = 1;
      this.#dirty.push(from);
    }
    const addr = meta[m + ADDR]!;
    const cls = meta[m + CLS]!;
    const bits = this.#classBits[cls]!;
    const mask = (1 << bits) - 1;
    const keys = this.#keyPages[addr >>> PAGE_BITS]!;
    const base = 2 * (addr & PAGE_MASK);
    const key = to + 1;
    let h = Math.imul(to, HASH_MUL) >>> (32 - bits);
    for (let k = keys[base + 2 * h]!; k !== 0; k = keys[base + 2 * h]!) {
      if (k === key) {
        const weights = this.#weightPages[addr >>> PAGE_BITS]!;
        weights[base + 2 * h + 1] = weights[base + 2 * h + 1]! + weight;
        return;
      }
      h = (h + 1) & mask;
    }
    if (meta[m + COUNT] === this.#classCap[cls]) this.#grow(from);
    this.#insert(from, to, weight);
    if (meta[m + COUNT]! > 2 * this.#maxNeighbours) this.#cut(from);
  }

  /**
   * Packs the gathered entries' weights and ix into #keys, ascending keys weakest first (the
   * higher ix of equal weights has the lower key); false when a weight is not a small integer.
   */
  #packKeys(n: number): boolean {
    const ix = this.#gatheredIx;
    const w = this.#gatheredW;
    const keys = this.#keys;
    for (let s = 0; s < n; s++) {
      const weight = w[s]!;
      if (!(weight <= MAX_PACKED_WEIGHT && Number.isInteger(weight))) return false;
      keys[s] = weight * TWO_32 + (TWO_32 - 1 - ix[s]!);
    }
    return true;
  }

  /** Keeps row r's strongest maxNeighbours, in a cleared table of the same class. */
  #cut(r: number): void {
    const cls = this.#meta[r * META + CLS]!;
    const k = this.#maxNeighbours;
    const n = this.#gather(r);
    if (this.#packKeys(n)) {
      // Selected, not sorted: the table keeps no order (sorting every cut row was ~7% of a
      // 1,000,000-event replay with the flushes' sorts).
      const order = this.#order;
      for (let s = 0; s < n; s++) order[s] = s;
      selectLargest(order, n, k, this.#packedKey);
      // The same class: #alloc takes the table just freed back, cleared.
      this.#reallocate(r, cls);
      for (let s = 0; s < Math.min(n, k); s++) this.#insert(r, this.#gatheredIx[order[s]!]!, this.#gatheredW[order[s]!]!);
      return;
    }
    const kept = Math.min(this.#sortRow(r), k);
    this.#reallocate(r, cls);
    for (let s = 0; s < kept; s++) this.#insert(r, this.#sortedIx[s]!, this.#sortedW[s]!);
  }

  addPair(a: number, b: number, w: number): void {
    if (a === b || w <= 0) return;
    this.#add(a, b, w);
    this.#add(b, a, w);
  }

  /**
   * The rows changed since the last publish or flush, encoded strongest first into one buffer (an
   * ArrayBuffer per row was most of the encoding's cost), in ix order, which is key order: LMDB
   * then walks its leaf pages in order (90,000 rows put in random order took ~3.5 us of CPU each,
   * in order ~2 us). Row i is words start[i] to start[i + 1] of `out`. Their dirty flags are cleared.
   */
  #encodeChanged(): { ix: Uint32Array; start: Uint32Array; out: Uint32Array } {
    const dirty = Uint32Array.from(this.#dirty).sort();
    this.#dirty.length = 0;
    const start = new Uint32Array(dirty.length + 1);
    for (let i = 0; i < dirty.length; i++) start[i + 1] = start[i]! + neighboursWords(this.#meta[dirty[i]! * META + COUNT]!);
    const out = new Uint32Array(start[dirty.length]!);
    const outWeights = new Float32Array(out.buffer);
    for (let i = 0; i < dirty.length; i++) {
      const r = dirty[i]!;
      this.#meta[r * META + DIRTY] = 0;
      // The whole row, in order; memory is not cut here (see the module comment). Copied by
      // loops: a subarray and a view per row were most of the encoding's cost (~4% of a replay).
      const n = this.#sortRow(r);
      const at = start[i]!;
      out[at] = n;
      for (let k = 0; k < n; k++) {
        out[at + 1 + k] = this.#sortedIx[k]!;
        outWeights[at + 1 + n + k] = this.#sortedW[k]!;
      }
    }
    return { ix: dirty, start, out };
  }

  /** Whether the rows changed since the last publish fit the board's current half. */
  #fitBoard(): boolean {
    let words = 0;
    for (const r of this.#dirty) words += neighboursWords(this.#meta[r * META + COUNT]!);
    return this.#board!.fits(this.#dirty.length, words);
  }

  #putOnBoard(changed: number[]): void {
    const { ix, start, out } = this.#encodeChanged();
    for (let i = 0; i < ix.length; i++) {
      this.#board!.put(ix[i]!, out, start[i]!, start[i + 1]! - start[i]!);
      changed.push(ix[i]!);
    }
  }

  /**
   * Publishes the rows changed since the last publish or flush to the board, where the ranking
   * workers read them at once; `changed` receives their ix. False (nothing published) when they
   * do not fit: a flush must write them.
   */
  publish(changed: number[]): boolean {
    if (this.#dirty.length === 0) return true;
    if (!this.#fitBoard()) return false;
    this.#putOnBoard(changed);
    return true;
  }

  /**
   * Encodes the rows changed since the last publish or flush; the returned function writes to
   * LMDB (in a transaction) every row changed since the last flush: the board's current half,
   * where they are published first when they fit, else the board's rows and then these around
   * it. `changed` receives the ix of the rows the ranking workers must read anew.
   */
  prepareFlush(changed: number[]): () => void {
    const board = this.#board;
    const put = (ix: number, bytes: Buffer) => this.#store.model.put(neighboursKey(this.#env, ix), bytes);
    if (board && this.#fitBoard()) {
      this.#putOnBoard(changed);
      this.#boardAfterFlush = 'flip';
      return () => board.forEachRow(put);
    }
    const { ix, start, out } = this.#encodeChanged();
    for (const r of ix) changed.push(r);
    if (board) {
      // Once cleared, the board holds none of its rows: whichever a worker read meanwhile from an
      // older snapshot, it reads anew after the commit.
      for (const r of board.rowIx()) changed.push(r);
      this.#boardAfterFlush = 'clear';
    }
    return () => {
      // Newer rows than some on the board: written after them.
      board?.forEachRow(put);
      for (let i = 0; i < ix.length; i++) put(ix[i]!, Buffer.from(out.buffer, start[i]! * 4, (start[i + 1]! - start[i]!) * 4));
    };
  }

  /** The last flush's commit is readable by every thread: its rows leave the board's current half. */
  flushReadable(): void {
    if (this.#boardAfterFlush === 'flip') this.#board!.flip();
    else if (this.#boardAfterFlush === 'clear') this.#board!.clear();
    this.#boardAfterFlush = undefined;
  }

  /** Drops every row (all written) when more than `max` are loaded; later touches read them back. */
  trim(max: number): void {
    if (this.#cached <= max) return;
    for (let m = ADDR; m < this.#meta.length; m += META) this.#meta[m] = NONE;
    // New pages come zeroed (empty tables); the old ones go to the GC.
    this.#keyPages.length = 0;
    this.#weightPages.length = 0;
    this.#pageUsed = PAGE_ENTRIES;
    for (const free of this.#free) free.length = 0;
    this.#cached = 0;
    this.#mayExist = true;
  }
}
