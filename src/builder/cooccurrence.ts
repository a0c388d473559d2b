/**
 * @module builder/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Each row is an
 * open-addressing table of (neighbour, weight) entries in one growable buffer (no object or typed
 * array per row: allocating and growing those was ~5% of the builder, issue 12), so a pair update
 * is a hash probe and an add in one cache line. The buffer is shared: the ranking workers read a
 * row where it is kept (store/live-rows.ts), and a publish only tells them which rows changed. A
 * row is cut back to its strongest `maxNeighbours` (equal weights: lower ix first) only when it
 * reaches twice that: where the order of the events says, never where a flush falls. Weights are
 * summed in f32, what is stored. A flush writes each changed row whole, in table order, up to
 * twice `maxNeighbours` long (readers sort it and take the strongest they need), stamped with the
 * event position it counts up to, so memory equals LMDB and a restart (or a trim) resumes from
 * exactly the state an uninterrupted builder keeps: a restart replays the log from the
 * environment's stored position, and each row skips the events its stamp says it counts (rows
 * are written a bounded number per transaction between the builder's steps: startRows).
 * Before, a flush also cut rows to the bound and rounded their f64
 * sums, and flushes come every 100 ms of wall time: the same events posted twice gave rows with
 * other weak neighbours, and 17 to 23 of MovieLens's 943 lists in another order (issue 13).
 * Keeping every row sorted as it changed (indexOf over up to 401 entries, binary search,
 * copyWithin) was ~22% of the builder's time at a 1M-event replay.
 */
import type { Store } from '../store/open.ts';
import { selectLargest } from '../domain/select-largest.ts';
import { NeighbourRowReader, neighboursKey, stampedNeighboursWords, stampRowPosition } from '../store/model-layout.ts';
import { ADDR, CLS, COUNT, createLiveRows, DIRTY, gatherSlots, LiveViews, META, NOTICED, sizeClasses, VERSION, type LiveRowsMemory } from '../store/live-rows.ts';
import { RowSorter } from '../store/row-sorter.ts';

/** Fibonacci hashing multiplier (2^32 / golden ratio) as an i32; a table of 2^b entries takes the top b bits. */
const HASH_MUL = -1640531535;
/** Most slots a row may hold (config/schema.ts caps maxNeighbours at 10,000: 20,001 slots). */
const MAX_ROW_SLOTS = 0xffff;
/** A row's DIRTY word: changed since the last write started (1), or started and not yet written (this). */
const PENDING = 2;

/**
 * How the builder worker writes an environment's neighbour rows: those changed since the last
 * flush are started, then put a bounded number per transaction between its steps
 * (builder/builder-worker.ts), and at the flush's finish the ranking workers are told which to
 * read anew.
 */
export interface RowWrites {
  startRows(): void;
  readonly pendingRows: number;
  prepareRows(most: number, position: number): () => void;
  takeWritten(changed: number[]): void;
}

export class CooccurrenceState implements RowWrites {
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
  /** The rows started (startRows), in ix order; those before `#pendingAt` are written. */
  #pending = new Uint32Array(0);
  #pendingAt = 0;
  /** Rows written since takeWritten, when no ranking worker reads the shared memory. */
  readonly #written: number[] = [];
  /** Per loaded row, the event position it counts up to (what it was loaded with, then written with). */
  #rowPosition = new Float64Array(0);
  /**
   * The position of the event being applied: a row counting it already (loaded from a write
   * after it, while a restart replays the log from the environment's position) skips it.
   */
  eventPosition = Infinity;
  /** Rows changed since the ranking workers were last told (publish). */
  readonly #unnoticed: number[] = [];
  #cached = 0;
  /** Next never-used table slot; slots below `#usedBefore` held tables before a reset and are cleared when taken. */
  #used = 0;
  #usedBefore = 0;
  /** Free tables per class, as slot addresses. */
  readonly #free: number[][] = [];
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
    if (ix >= this.#rowPosition.length) {
      const grown = new Float64Array(Math.max(ix + 1, 2 * this.#rowPosition.length, 1024));
      grown.set(this.#rowPosition);
      this.#rowPosition = grown;
    }
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
    this.#rowPosition[r] = stored.position;
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
    if (this.eventPosition <= this.#rowPosition[from]!) return;
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
   * Starts writing the rows changed since the last start: prepareRows encodes them a bounded
   * number at a time, and the rows the events change meanwhile wait for the next start (those
   * started and changed again are written with their later state). A row is put whole, in table order, in ix
   * order, which is key order: LMDB then walks its leaf pages in order (90,000 rows put in random
   * order took ~3.5 us of CPU each, in order ~2 us). Not sorted: readers sort what they read
   * (sorting every written row was ~25% of the builder's CPU under a sustained load).
   */
  startRows(): void {
    const rows = Uint32Array.from(this.#dirty).sort();
    this.#dirty.length = 0;
    const meta = this.#views.meta;
    for (const r of rows) meta[r * META + DIRTY] = PENDING;
    this.#pending = rows;
    this.#pendingAt = 0;
  }

  /** Rows started (startRows) and not yet written. */
  get pendingRows(): number {
    return this.#pending.length - this.#pendingAt;
  }

  /**
   * Encodes up to `most` of the rows started, each stamped with `position` (the last event
   * applied, all of which it counts: store/model-layout.ts rowPositionOf); the result puts them (inside
   * a transaction: run again if it is retried). A row encoded is clean until an event changes it again.
   * Before, a flush rewrote every changed row in one transaction while the events waited: ~0.9 s
   * of CPU two minutes into a steady ~9,400 events/s over 100,000 items (the lag's p99 2.5 s),
   * and LMDB kept as much memory as that transaction dirtied (~400 MB).
   */
  prepareRows(most: number, position: number): () => void {
    const rows = this.#pending;
    const from = this.#pendingAt;
    const to = Math.min(rows.length, from + most);
    const meta = this.#views.meta;
    const start = new Uint32Array(to - from + 1);
    for (let i = from; i < to; i++) start[i - from + 1] = start[i - from]! + stampedNeighboursWords(meta[rows[i]! * META + COUNT]!);
    // One buffer for the slice: an ArrayBuffer per row was most of the encoding's cost.
    const out = new Uint32Array(start[to - from]!);
    const outWeights = new Float32Array(out.buffer);
    const sorter = this.#sorter;
    for (let i = from; i < to; i++) {
      const r = rows[i]!;
      meta[r * META + DIRTY] = 0;
      this.#rowPosition[r] = position;
      // Copied by loops: a subarray and a view per row were ~4% of a replay.
      const n = this.#gather(r);
      const at = start[i - from]!;
      out[at] = n;
      for (let k = 0; k < n; k++) {
        out[at + 1 + k] = sorter.gatheredIx[k]!;
        outWeights[at + 1 + n + k] = sorter.gatheredW[k]!;
      }
      stampRowPosition(out, at, n, position);
      if (!this.#shared) this.#written.push(r);
    }
    this.#pendingAt = to;
    return () => {
      for (let i = from; i < to; i++) this.#store.model.put(neighboursKey(this.#env, rows[i]!), Buffer.from(out.buffer, start[i - from]! * 4, (start[i - from + 1]! - start[i - from]!) * 4));
    };
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
   * The ix of the rows the ranking workers must read anew once the rows written are readable,
   * into `changed`: those not yet told when they read the shared memory, else all written.
   */
  takeWritten(changed: number[]): void {
    if (this.#shared) {
      this.#takeUnnoticed(changed);
      return;
    }
    for (const r of this.#written) changed.push(r);
    this.#written.length = 0;
    this.#unnoticed.length = 0;
  }

  /**
   * Once a flush is readable by every thread: more than `max` rows loaded drops those unchanged
   * since they were written; later touches read them back. Not before: a ranking worker that met
   * a dropped row before the commit was readable would have read LMDB's older one.
   */
  trim(max: number): void {
    if (this.#cached <= max) return;
    const meta = this.#views.meta;
    for (let m = 0; m < meta.length; m += META) {
      if (meta[m + ADDR] === 0 || meta[m + DIRTY] !== 0) continue;
      Atomics.add(meta, m + VERSION, 1);
      this.#free[meta[m + CLS]!]!.push(meta[m + ADDR]! - 1);
      meta[m + ADDR] = meta[m + COUNT] = meta[m + NOTICED] = 0;
      Atomics.add(meta, m + VERSION, 1);
      this.#cached--;
    }
    this.#mayExist = true;
  }
}
