/**
 * @module store/live-rows
 * The model builder's co-occurrence rows in shared memory: its open-addressing tables
 * (builder/cooccurrence.ts) live in two growable SharedArrayBuffers per environment, made on the
 * main thread and handed to the builder and every ranking worker, which reads a row there before
 * LMDB. The row board before it (a copy of every changed row, sorted and encoded every 100 ms)
 * cost as much as the rows were large: held for minutes at ~9,400 events/s over 100,000 items,
 * ~30,000 rows of up to 200 neighbours changed a second, the board's 16 MB halves no longer held a
 * second of them, every overflow forced a flush, and the builder's CPU per event went from 17 to
 * 66 µs within 90 s (issue 12, the events bench's sustained round). A row is now read where the
 * builder keeps it; publishing is telling the workers which rows changed.
 *
 * `meta`: META words per item index: the row's table (entry offset + 1; 0 when not loaded),
 * its size class, entry count, the builder's dirty and noticed flags, and a version. `entries`:
 * two words per table slot, the neighbour ix + 1 (0: empty) and its f32 weight.
 *
 * Only the builder writes. A weight grows in place (one aligned word: a reader sees the old or
 * the new sum); every other change of a row (a new neighbour, a move to a larger table, a cut, a
 * load or a drop) makes its version odd first and even after. A reader copies a row between two
 * equal even versions, else tries again, then leaves the row to LMDB.
 */
import type { NeighbourRowReader } from './model-layout.ts';
import { RowSorter } from './row-sorter.ts';

export const META = 6;
export const [ADDR, CLS, COUNT, DIRTY, VERSION, NOTICED] = [0, 1, 2, 3, 4, 5];
/** Reserved address space; pages are backed only as rows are loaded. */
const META_MAX_BYTES = 2 ** 30;
const ENTRIES_MAX_BYTES = 2 ** 31;
/** The entries grow by this much (8 MB, the pages the tables had before). */
const ENTRIES_STEP_BYTES = 8 << 20;
/** Reads that met a change are tried again this often, then left to LMDB. */
const READ_TRIES = 4;

type Growable = SharedArrayBuffer & { grow(bytes: number): void; readonly maxByteLength: number };
const growable = (max: number) => new (SharedArrayBuffer as unknown as new (bytes: number, options: { maxByteLength: number }) => Growable)(0, { maxByteLength: max });

/** One environment's rows: shared by the builder (writer) and every ranking worker (readers). */
export interface LiveRowsMemory {
  meta: SharedArrayBuffer;
  entries: SharedArrayBuffer;
}

/** The rows' memory per environment, made on the main thread: a restarted builder writes where the workers read. */
export function createLiveRows(environments: Iterable<string>): Record<string, LiveRowsMemory> {
  const live: Record<string, LiveRowsMemory> = {};
  for (const environment of environments) live[environment] = { meta: growable(META_MAX_BYTES), entries: growable(ENTRIES_MAX_BYTES) };
  return live;
}

/**
 * Slot capacity (`caps`) and log2 table size (`bits`) of each size class for a bound: capacities
 * 8, 32, 128, ... up to one slot beyond twice the bound (a full row is cut back before the next
 * new neighbour), each table at least twice its capacity so probes stay short.
 */
export function sizeClasses(maxNeighbours: number): { caps: number[]; bits: number[] } {
  const caps: number[] = [];
  const bits: number[] = [];
  const maxCapacity = 2 * maxNeighbours + 1;
  for (let cap = 8; ; cap *= 4) {
    const c = Math.min(cap, maxCapacity);
    let b = 1;
    while (1 << b < 2 * c) b++;
    caps.push(c);
    bits.push(b);
    if (c === maxCapacity) return { caps, bits };
  }
}

/**
 * Views of the shared buffers, remade when they have grown: fixed-length views (a view that
 * tracks a growable buffer's length was ~6× slower to index here).
 */
export class LiveViews {
  readonly #memory: { meta: Growable; entries: Growable };
  meta: Int32Array<ArrayBufferLike> = new Int32Array(0);
  keys: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  weights: Float32Array<ArrayBufferLike> = new Float32Array(0);

  constructor(memory: LiveRowsMemory) {
    this.#memory = memory as { meta: Growable; entries: Growable };
    this.refresh();
  }

  /** Views over what the buffers hold now. */
  refresh(): void {
    const { meta, entries } = this.#memory;
    if (meta.byteLength !== this.meta.byteLength) this.meta = new Int32Array(meta, 0, meta.byteLength >>> 2);
    if (entries.byteLength !== this.keys.byteLength) {
      this.keys = new Uint32Array(entries, 0, entries.byteLength >>> 2);
      this.weights = new Float32Array(entries, 0, entries.byteLength >>> 2);
    }
  }

  /** Builder: room for the rows up to `ix` (new rows read as not loaded). */
  growMeta(ix: number): void {
    const need = (ix + 1) * META * 4;
    if (need <= this.#memory.meta.byteLength) return;
    const meta = this.#memory.meta;
    if (need > meta.maxByteLength) throw new RangeError(`item index ${ix} is past the ${meta.maxByteLength / (META * 4)} rows the builder's shared memory holds`);
    meta.grow(Math.min(meta.maxByteLength, Math.max(need, 2 * meta.byteLength, 1 << 16)));
    this.refresh();
  }

  /** Builder: room for `slots` table slots in all. */
  growEntries(slots: number): void {
    const entries = this.#memory.entries;
    const need = slots * 8;
    if (need <= entries.byteLength) return;
    if (need > entries.maxByteLength) throw new RangeError(`the neighbour rows outgrew the builder's ${entries.maxByteLength >> 20} MB of shared memory`);
    entries.grow(Math.min(entries.maxByteLength, Math.ceil(need / ENTRIES_STEP_BYTES) * ENTRIES_STEP_BYTES));
    this.refresh();
  }
}

/**
 * Copies the neighbours of a table of `size` slots at slot `from` (table order) into `outIx` and
 * `outW`; returns their count. The builder's and a reader's view of a row.
 */
export function gatherSlots(keys: Uint32Array<ArrayBufferLike>, weights: Float32Array<ArrayBufferLike>, from: number, size: number, outIx: Uint32Array, outW: Float32Array): number {
  let n = 0;
  for (let e = 2 * from; e < 2 * (from + size); e += 2) {
    const key = keys[e]!;
    if (key === 0) continue;
    outIx[n] = key - 1;
    outW[n++] = weights[e + 1]!;
  }
  return n;
}


/** A ranking worker's reads of the builder's rows. */
export class LiveRowReader {
  readonly #views: LiveViews;
  readonly #bits: number[];
  readonly #sorter: RowSorter;

  constructor(memory: LiveRowsMemory, maxNeighbours: number) {
    this.#views = new LiveViews(memory);
    this.#bits = sizeClasses(maxNeighbours).bits;
    this.#sorter = new RowSorter(1 << this.#bits[this.#bits.length - 1]!);
  }

  /** Copies ix's row, strongest first, into `reader`; returns its neighbour count, or -1 when the builder holds none (read LMDB). */
  read(ix: number, reader: NeighbourRowReader): number {
    const views = this.#views;
    const m = ix * META;
    if (m + META > views.meta.length) views.refresh();
    if (m + META > views.meta.length) return -1;
    const sorter = this.#sorter;
    for (let tries = 0; tries < READ_TRIES; tries++) {
      const meta = views.meta;
      const version = Atomics.load(meta, m + VERSION);
      if ((version & 1) === 1) continue;
      const addr = meta[m + ADDR]! - 1;
      if (addr < 0) return -1;
      const bits = this.#bits[meta[m + CLS]!];
      if (bits === undefined) continue;
      const size = 1 << bits;
      if (2 * (addr + size) > views.keys.length) views.refresh();
      const { keys, weights } = views;
      if (2 * (addr + size) > keys.length) continue;
      const n = gatherSlots(keys, weights, addr, size, sorter.gatheredIx, sorter.gatheredW);
      if (Atomics.load(meta, m + VERSION) !== version) continue;
      sorter.sort(n);
      reader.setSorted(sorter, n);
      return n;
    }
    return -1;
  }
}
