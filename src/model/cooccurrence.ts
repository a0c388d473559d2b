/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Each row is an
 * open-addressing table of (neighbour, weight) entries in one growable buffer (no object or typed
 * array per row: allocating and growing those was ~5% of the builder, issue 12), so a pair update
 * is a hash probe and an add in one cache line. The buffer is shared: the ranking workers read a
 * row where it is kept (store/live-rows.ts), and a publish only tells them which rows changed. A
 * row is cut back to its strongest `maxNeighbours` (equal weights: lower ix first) only when it
 * reaches twice that: where the order of the events says, never where a flush falls. Weights are
 * summed in f32, what is stored. A flush writes each changed row whole, in table order, up to
 * twice `maxNeighbours` long (readers sort it and take the strongest they need), so memory equals LMDB and a restart (or a trim) resumes from exactly the state an
 * uninterrupted builder keeps. Before, a flush also cut rows to the bound and rounded their f64
 * sums, and flushes come every 100 ms of wall time: the same events posted twice gave rows with
 * other weak neighbours, and 17 to 23 of MovieLens's 943 lists in another order (issue 13).
 * Keeping every row sorted as it changed (indexOf over up to 401 entries, binary search,
 * copyWithin) was ~22% of the builder's time at a 1M-event replay.
 */
import type { Store } from '../store/open.ts';
import { selectLargest } from '../domain/select-largest.ts';
import { NeighbourRowReader, neighboursKey, neighboursWords } from '../store/model.ts';
import { ADDR, CLS, COUNT, createLiveRows, DIRTY, gatherSlots, LiveViews, META, NOTICED, RowSorter, sizeClasses, VERSION, type LiveRowsMemory } from '../store/live-rows.ts';

/** Fibonacci hashing multiplier (2^32 / golden ratio) as an i32; a table of 2^b entries takes the top b bits. */
const HASH_MUL = -1640531535;
/** Most slots a row may hold (config/schema.ts caps maxNeighbours at 10,000: 20,001 slots). */
const MAX_ROW_SLOTS = 0xffff;

export class CooccurrenceState {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  /** Slot capacity of each size class: half its table, the last one beyond twice the bound. */
  readonly #classCap: number[];
  /** log2 of each class's table size: at least twice its capacity, so probes stay short. */
  readonly #classBits: number[];
  /** Whether rows may be stored: false for an environment the builder has never written, so a first touch skips the read. */
  #mayExist: boolean;

  /**
   * The rows' metadata (META words per item index: one cache line for everything a pair update
   * asks of its row) and their tables, in memory the ranking workers read (store/live-rows.ts).
   * Each row is an open-addressing table whose entries hold the neighbour (ix + 1; 0 empty) and
   * its summed f32 weight side by side: a pair update reads one cache line. A table never moves
   * but to a larger class; a freed one is reused by its class.
   */
  readonly #views: LiveViews;
  /** Whether ranking workers read these rows (else the memory is this state's alone). */
  readonly #shared: boolean;
  readonly #dirty: number[] = [];
  /** Rows changed since the ranking workers were last told (publish). */
  readonly #unnoticed: number[] = [];
  #cached = 0;
  /** Next never-used table slot; slots below `#usedBefore` held tables before a reset and are cleared when taken. */
  #used = 0;
  #usedBefore = 0;
  /** Free tables per class, as slot addresses. */
  readonly #free: number[][] = [];
  /** Set by a flush that found more rows loaded than its bound: dropped once its commit is readable. */
  #trimDue = false;
  readonly #sorter: RowSorter;
  /** A slot's packed key (RowSorter.packKeys), for selectLargest. */
  readonly #packedKey = (s: number): number => this.#sorter.key(s);
  readonly #order: Uint32Array;
  readonly #reader = new NeighbourRowReader();

  /**
   * `fresh`: nothing of this environment was ever written (the builder's position is 0). `live`:
   * the memory the ranking workers read the rows from; whatever a previous builder left there is
   * dropped first.
   */
  constructor(store: Store, env: string, maxNeighbours: number, fresh = false, live?: LiveRowsMemory) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
    this.#mayExist = !fresh;
    const maxCapacity = 2 * maxNeighbours + 1;
    if (maxCapacity > MAX_ROW_SLOTS) throw new RangeError(`maxNeighbours ${maxNeighbours} is over ${(MAX_ROW_SLOTS - 1) / 2}: a row's table would be too large`);
    ({ caps: this.#classCap, bits: this.#classBits } = sizeClasses(maxNeighbours));
    for (let c = 0; c < this.#classCap.length; c++) this.#free.push([]);
    this.#shared = live !== undefined;
    this.#views = new LiveViews(live ?? createLiveRows(['own']).own!);
    this.#sorter = new RowSorter(maxCapacity);
    this.#order = new Uint32Array(maxCapacity);
    this.#reset();
  }

  /** Drops every row a previous builder thread left in the shared memory (a restart reads them anew). */
  #reset(): void {
    const meta = this.#views.meta;
    for (let m = 0; m < meta.length; m += META) {
      if (meta[m + ADDR] === 0 && (meta[m + VERSION]! & 1) === 0) continue;
      // Odd if that thread died inside a change: made even again, the row not loaded.
      if ((meta[m + VERSION]! & 1) === 0) Atomics.add(meta, m + VERSION, 1);
      meta[m + ADDR] = meta[m + CLS] = meta[m + COUNT] = meta[m + DIRTY] = meta[m + NOTICED] = 0;
      Atomics.add(meta, m + VERSION, 1);
    }
    this.#usedBefore = this.#views.keys.length >>> 1;
  }

  #ensureRows(ix: number): void {
    if ((ix + 1) * META <= this.#views.meta.length) return;
    this.#views.growMeta(ix);
  }

  /** Gives row `r` an empty table of class `cls` (its version odd: the caller is changing it). */
  #alloc(r: number, cls: number): void {
    const size = 1 << this.#classBits[cls]!;
    let addr = this.#free[cls]!.pop();
    if (addr === undefined) {
      addr = this.#used;
      this.#used += size;
      this.#views.growEntries(this.#used);
      // Fresh growth is zeroed (empty tables); slots a reset left behind are not.
      if (addr < this.#usedBefore) this.#views.keys.fill(0, 2 * addr, 2 * (addr + size));
    } else {
      this.#views.keys.fill(0, 2 * addr, 2 * (addr + size));
    }
    const meta = this.#views.meta;
    const m = r * META;
    meta[m + ADDR] = addr + 1;
    meta[m + CLS] = cls;
    meta[m + COUNT] = 0;
  }

  /** Puts a neighbour known to be absent into row r's table (room checked by the caller). */
  #insert(r: number, to: number, weight: number): void {
    const meta = this.#views.meta;
    const m = r * META;
    const base = 2 * (meta[m + ADDR]! - 1);
    const bits = this.#classBits[meta[m + CLS]!]!;
    const mask = (1 << bits) - 1;
    const keys = this.#views.keys;
    let h = Math.imul(to, HASH_MUL) >>> (32 - bits);
    while (keys[base + 2 * h] !== 0) h = (h + 1) & mask;
    this.#views.weights[base + 2 * h + 1] = weight;
    keys[base + 2 * h] = to + 1;
    meta[m + COUNT]!++;
  }

  /** Copies row r's entries (table order) to the sorter's gathered arrays; returns their count. */
  #gather(r: number): number {
    const meta = this.#views.meta;
    const m = r * META;
    return gatherSlots(this.#views.keys, this.#views.weights, meta[m + ADDR]! - 1, 1 << this.#classBits[meta[m + CLS]!]!, this.#sorter.gatheredIx, this.#sorter.gatheredW);
  }

  /** Loads row r (from LMDB when it may exist) into a table of its size. */
  #load(r: number): void {
    const stored = this.#reader;
    // Written under a larger maxNeighbours (the configuration changed): rows are stored strongest
    // first, so the row keeps its strongest entries, as the cut under the new bound keeps them.
    const storedCount = stored.read(this.#mayExist ? this.#store.model.getBinaryFast(neighboursKey(this.#env, r)) : undefined);
    // Stored in no order: its strongest first when it is cut here.
    if (storedCount > 2 * this.#maxNeighbours) stored.sortWith(this.#sorter);
    const n = storedCount > 2 * this.#maxNeighbours ? this.#maxNeighbours : storedCount;
    let cls = 0;
    while (this.#classCap[cls]! < n) cls++;
    const meta = this.#views.meta;
    Atomics.add(meta, r * META + VERSION, 1);
    this.#alloc(r, cls);
    for (let i = 0; i < n; i++) this.#insert(r, stored.ix(i), stored.weight(i));
    Atomics.add(meta, r * META + VERSION, 1);
    this.#cached++;
  }

  /** Gives row r an empty table of class `cls`, its old one freed (a freed table is cleared when reused). */
  #reallocate(r: number, cls: number): void {
    const meta = this.#views.meta;
    this.#free[meta[r * META + CLS]!]!.push(meta[r * META + ADDR]! - 1);
    this.#alloc(r, cls);
  }

  /** Moves row r's entries to a table of the next class up. */
  #grow(r: number): void {
    const n = this.#gather(r);
    this.#reallocate(r, this.#views.meta[r * META + CLS]! + 1);
    const { gatheredIx, gatheredW } = this.#sorter;
    for (let s = 0; s < n; s++) this.#insert(r, gatheredIx[s]!, gatheredW[s]!);
  }

  #add(from: number, to: number, weight: number): void {
    this.#ensureRows(from);
    const m = from * META;
    if (this.#views.meta[m + ADDR] === 0) this.#load(from);
    const meta = this.#views.meta;
    if (meta[m + DIRTY] === 0) {
      meta[m + DIRTY] = 1;
      this.#dirty.push(from);
    }
    if (meta[m + NOTICED] === 0) {
      meta[m + NOTICED] = 1;
      this.#unnoticed.push(from);
    }
    const base = 2 * (meta[m + ADDR]! - 1);
    const cls = meta[m + CLS]!;
    const bits = this.#classBits[cls]!;
    const mask = (1 << bits) - 1;
    const keys = this.#views.keys;
    const key = to + 1;
    let h = Math.imul(to, HASH_MUL) >>> (32 - bits);
    for (let k = keys[base + 2 * h]!; k !== 0; k = keys[base + 2 * h]!) {
      if (k === key) {
        // One aligned word: a reader sees the old sum or the new one, no version needed.
        const weights = this.#views.weights;
        weights[base + 2 * h + 1] = weights[base + 2 * h + 1]! + weight;
        return;
      }
      h = (h + 1) & mask;
    }
    // A new neighbour: the row's version is odd while its table changes.
    Atomics.add(meta, m + VERSION, 1);
    if (meta[m + COUNT] === this.#classCap[cls]) this.#grow(from);
    this.#insert(from, to, weight);
    if (meta[m + COUNT]! > 2 * this.#maxNeighbours) this.#cut(from);
    Atomics.add(meta, m + VERSION, 1);
  }

  /** Keeps row r's strongest maxNeighbours, in a cleared table of the same class. */
  #cut(r: number): void {
    const cls = this.#views.meta[r * META + CLS]!;
    const k = this.#maxNeighbours;
    const n = this.#gather(r);
    const sorter = this.#sorter;
    if (sorter.packKeys(n)) {
      // Selected, not sorted: the table keeps no order (sorting every cut row was ~7% of a
      // 1,000,000-event replay with the flushes' sorts).
      const order = this.#order;
      for (let s = 0; s < n; s++) order[s] = s;
      selectLargest(order, n, k, this.#packedKey);
      // The same class: #alloc takes the table just freed back, cleared.
      this.#reallocate(r, cls);
      for (let s = 0; s < Math.min(n, k); s++) this.#insert(r, sorter.gatheredIx[order[s]!]!, sorter.gatheredW[order[s]!]!);
      return;
    }
    sorter.sort(n);
    const kept = Math.min(n, k);
    this.#reallocate(r, cls);
    for (let s = 0; s < kept; s++) this.#insert(r, sorter.ix[s]!, sorter.weight[s]!);
  }

  addPair(a: number, b: number, w: number): void {
    if (a === b || w <= 0) return;
    this.#add(a, b, w);
    this.#add(b, a, w);
  }

  /**
   * The rows changed since the last flush, encoded in table order into one buffer (an
   * ArrayBuffer per row was most of the encoding's cost), in ix order, which is key order: LMDB
   * then walks its leaf pages in order (90,000 rows put in random order took ~3.5 us of CPU each,
   * in order ~2 us). Row i is words start[i] to start[i + 1] of `out`. Their dirty flags are cleared.
   * Not sorted: readers sort what they read (sorting every written row was ~25% of the builder's
   * CPU under a sustained load, and most rows written are never read from LMDB).
   */
  #encodeChanged(): { ix: Uint32Array; start: Uint32Array; out: Uint32Array } {
    const dirty = Uint32Array.from(this.#dirty).sort();
    this.#dirty.length = 0;
    const meta = this.#views.meta;
    const start = new Uint32Array(dirty.length + 1);
    for (let i = 0; i < dirty.length; i++) start[i + 1] = start[i]! + neighboursWords(meta[dirty[i]! * META + COUNT]!);
    const out = new Uint32Array(start[dirty.length]!);
    const outWeights = new Float32Array(out.buffer);
    const sorter = this.#sorter;
    for (let i = 0; i < dirty.length; i++) {
      const r = dirty[i]!;
      meta[r * META + DIRTY] = 0;
      // The whole row; memory is not cut here (see the module comment). Copied by loops: a
      // subarray and a view per row were most of the encoding's cost (~4% of a replay).
      const n = this.#gather(r);
      const at = start[i]!;
      out[at] = n;
      for (let k = 0; k < n; k++) {
        out[at + 1 + k] = sorter.gatheredIx[k]!;
        outWeights[at + 1 + n + k] = sorter.gatheredW[k]!;
      }
    }
    return { ix: dirty, start, out };
  }

  /** The rows changed since the ranking workers were last told, their noticed flags cleared, into `changed`. */
  #takeUnnoticed(changed: number[]): void {
    const meta = this.#views.meta;
    for (const r of this.#unnoticed) {
      meta[r * META + NOTICED] = 0;
      changed.push(r);
    }
    this.#unnoticed.length = 0;
  }

  /**
   * The ix of the rows changed since the last publish, into `changed`: the ranking workers read
   * them anew from the shared memory (store/live-rows.ts). Nothing is copied.
   */
  publish(changed: number[]): void {
    this.#takeUnnoticed(changed);
  }

  /**
   * Encodes the rows changed since the last flush; the returned function writes them to LMDB (in
   * a transaction). `changed` receives the ix of the rows the ranking workers must read anew once
   * the commit is readable: those not yet told when they read the shared memory, else all written.
   */
  prepareFlush(changed: number[]): () => void {
    const { ix, start, out } = this.#encodeChanged();
    if (this.#shared) this.#takeUnnoticed(changed);
    else {
      for (const r of ix) changed.push(r);
      this.#unnoticed.length = 0;
    }
    return () => {
      for (let i = 0; i < ix.length; i++) this.#store.model.put(neighboursKey(this.#env, ix[i]!), Buffer.from(out.buffer, start[i]! * 4, (start[i + 1]! - start[i]!) * 4));
    };
  }

  /** After a flush: more than `max` rows loaded drops those it wrote once its commit is readable (flushReadable). */
  trim(max: number): void {
    if (this.#cached > max) this.#trimDue = true;
  }

  /**
   * The last flush's commit is readable by every thread: when it found more rows loaded than the
   * bound, the rows unchanged since (all written) are dropped; later touches read them back.
   * Not at the flush: a ranking worker that met a dropped row before the commit was readable
   * would have read LMDB's older one.
   */
  flushReadable(): void {
    if (!this.#trimDue) return;
    this.#trimDue = false;
    const meta = this.#views.meta;
    for (let m = 0; m < meta.length; m += META) {
      if (meta[m + ADDR] === 0 || meta[m + DIRTY] === 1) continue;
      Atomics.add(meta, m + VERSION, 1);
      this.#free[meta[m + CLS]!]!.push(meta[m + ADDR]! - 1);
      meta[m + ADDR] = meta[m + COUNT] = meta[m + NOTICED] = 0;
      Atomics.add(meta, m + VERSION, 1);
      this.#cached--;
    }
    this.#mayExist = true;
  }
}
