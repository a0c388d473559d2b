/**
 * @module store/row-board
 * Neighbour rows the model builder has published but not yet written to LMDB, in shared memory
 * the ranking workers read before LMDB (one board per environment). The builder publishes the
 * rows its events changed every 100 ms and writes them, with histories, popularity and its
 * position, to LMDB about once a second: writing every row and consumer record to LMDB every
 * 100 ms was most of its CPU at a steady load (a 13.8 ms flush ten times a second at ~9,400
 * events/s, LMDB's puts and commit ~80% of it), and a hot row was rewritten ten times a second.
 *
 * Two halves, one `current` (the builder appends to it) and one `previous` (its rows were written
 * to LMDB by the last flush; kept readable while the ranking workers' read snapshots catch up).
 * Each half is an open-addressing table (ix → arena word) and an arena of encoded rows in the
 * layout LMDB stores (store/model.ts `nb`). Rows are appended, never changed in place; a newer
 * version is stored at a new word and its table entry moved to it (Atomics). A flush that wrote
 * the current half flips the halves and clears the one that becomes current. A reader checks
 * the epoch before and after it copies a row and copies again if it changed, so it never keeps
 * bytes the builder was overwriting. Only the builder writes; it must not publish between a
 * flush's commit and the flip (or clear) that follows it once the commit is readable.
 */
import type { NeighbourRowReader } from './model.ts';

const EPOCH = 0;
const HEADER_WORDS = 16;
/** Table slots per half; at most 3/4 of them hold rows (probes stay short). */
const TABLE_BITS = 16;
const SLOTS = 1 << TABLE_BITS;
const MASK = SLOTS - 1;
export const BOARD_MAX_ROWS = (SLOTS * 3) >>> 2;
/**
 * Arena words per half (16 MB): a steady ~9,400 events/s publish ~1,000 rows every 100 ms, up to
 * 1.6 KB each on a mature store. A flush that does not fit is written to LMDB at once instead.
 */
export const BOARD_ARENA_WORDS = 4 << 20;
/** Per half: words used in its arena, rows in its table. */
const USED = 0;
const ROWS = 1;
const HALF_META = 2;
const KEYS = HALF_META;
const OFFSETS = KEYS + SLOTS;
const ARENA = OFFSETS + SLOTS;
const HALF_WORDS = ARENA + BOARD_ARENA_WORDS;
/** Fibonacci hashing (2^32 / golden ratio), as in model/cooccurrence.ts. */
const HASH_MUL = -1640531535;
/** Reads whose epoch changed under them are tried again this often, then left to LMDB. */
const READ_TRIES = 4;

/** One environment's board: shared by the builder (writer) and every ranking worker (readers). */
export type RowBoardMemory = SharedArrayBuffer;

/** A board per environment, made on the main thread and handed to the builder and the ranking workers. */
export function createRowBoards(environments: Iterable<string>): Record<string, RowBoardMemory> {
  const boards: Record<string, RowBoardMemory> = {};
  // Pages are touched only as rows are published: untouched, the 34 MB cost no memory.
  for (const environment of environments) boards[environment] = new SharedArrayBuffer(4 * (HEADER_WORDS + 2 * HALF_WORDS));
  return boards;
}

const slotOf = (ix: number) => Math.imul(ix, HASH_MUL) >>> (32 - TABLE_BITS);

class BoardView {
  protected readonly words: Int32Array;
  protected readonly u32: Uint32Array;

  constructor(memory: RowBoardMemory) {
    this.words = new Int32Array(memory);
    this.u32 = new Uint32Array(memory);
  }

  protected half(epoch: number): number {
    return HEADER_WORDS + (epoch & 1) * HALF_WORDS;
  }

  /** The arena word of ix's row in the half at `base`, or -1. */
  protected find(base: number, ix: number): number {
    const key = ix + 1;
    for (let s = slotOf(ix), probes = 0; probes < SLOTS; s = (s + 1) & MASK, probes++) {
      const k = Atomics.load(this.words, base + KEYS + s);
      if (k === 0) return -1;
      if (k === key) return Atomics.load(this.words, base + OFFSETS + s);
    }
    return -1;
  }
}

/** Ranking worker: reads a published row. */
export class RowBoardReader extends BoardView {
  /** Copies ix's published row into `reader`; returns its neighbour count, or -1 when the board has none (read LMDB). */
  read(ix: number, reader: NeighbourRowReader): number {
    for (let tries = 0; tries < READ_TRIES; tries++) {
      const epoch = Atomics.load(this.words, EPOCH);
      let base = this.half(epoch);
      let at = this.find(base, ix);
      if (at < 0) at = this.find((base = this.half(epoch + 1)), ix);
      let n = -1;
      if (at >= 0) {
        const count = this.u32[base + ARENA + at]!;
        const words = 1 + 2 * count;
        n = at + words <= BOARD_ARENA_WORDS ? reader.readWords(this.u32, base + ARENA + at, words) : -1;
      }
      if (Atomics.load(this.words, EPOCH) === epoch) return n;
    }
    return -1;
  }
}

/** Model builder: publishes rows, lists the current half for its flush, flips and clears. */
export class RowBoardWriter extends BoardView {
  #current(): number {
    return this.half(Atomics.load(this.words, EPOCH));
  }

  /** Whether `rows` more rows of `words` words in all fit the current half. */
  fits(rows: number, words: number): boolean {
    const base = this.#current();
    return this.words[base + ROWS]! + rows <= BOARD_MAX_ROWS && this.words[base + USED]! + words <= BOARD_ARENA_WORDS;
  }

  /** Publishes ix's row: `words` words of `encoded` from `at` (checked with fits() first). */
  put(ix: number, encoded: Uint32Array, at: number, words: number): void {
    const base = this.#current();
    const used = this.words[base + USED]!;
    const key = ix + 1;
    let s = slotOf(ix);
    for (let k = this.words[base + KEYS + s]!; k !== 0 && k !== key; k = this.words[base + KEYS + s]!) s = (s + 1) & MASK;
    const added = this.words[base + KEYS + s] === 0;
    // Past the arena is the other half, and a full table would never end a probe: whatever the caller checked.
    if (used + words > BOARD_ARENA_WORDS || (added && this.words[base + ROWS]! >= BOARD_MAX_ROWS)) {
      throw new RangeError(`a row of ${words} words does not fit the board's half (${used} of ${BOARD_ARENA_WORDS} words, ${this.words[base + ROWS]} of ${BOARD_MAX_ROWS} rows)`);
    }
    this.u32.set(encoded.subarray(at, at + words), base + ARENA + used);
    this.words[base + USED] = used + words;
    // The row's words before its offset, the offset before a new key: a reader that finds either sees the row whole.
    Atomics.store(this.words, base + OFFSETS + s, used);
    if (added) {
      Atomics.store(this.words, base + KEYS + s, key);
      this.words[base + ROWS]!++;
    }
  }

  /** The ix of the current half's rows, ascending. */
  rowIx(): Uint32Array {
    const base = this.#current();
    const ixs = new Uint32Array(this.words[base + ROWS]!);
    for (let s = 0, n = 0; s < SLOTS; s++) {
      const k = this.words[base + KEYS + s]!;
      if (k !== 0) ixs[n++] = k - 1;
    }
    return ixs.sort();
  }

  /** Rows in the current half. */
  get rows(): number {
    return this.words[this.#current() + ROWS]!;
  }

  /**
   * The current half's rows in ix order (LMDB's key order): `write(ix, bytes)` gets each row's
   * bytes, copied out of shared memory into one buffer (lmdb-js writes wrong bytes from a view
   * of a SharedArrayBuffer).
   */
  forEachRow(write: (ix: number, bytes: Buffer) => void): void {
    const base = this.#current();
    const ixs = this.rowIx();
    const n = ixs.length;
    const copy = new Uint32Array(this.words[base + USED]!);
    let to = 0;
    for (let i = 0; i < n; i++) {
      const at = base + ARENA + this.find(base, ixs[i]!);
      const words = 1 + 2 * this.u32[at]!;
      copy.set(this.u32.subarray(at, at + words), to);
      write(ixs[i]!, Buffer.from(copy.buffer, to * 4, words * 4));
      to += words;
    }
  }

  /**
   * After a flush wrote the current half to LMDB and the commit is readable: that half becomes
   * the previous one, and the one before (written a flush earlier) is cleared to become current.
   */
  flip(): void {
    const epoch = Atomics.load(this.words, EPOCH);
    this.#clearHalf(this.half(epoch + 1));
    Atomics.store(this.words, EPOCH, epoch + 1);
  }

  /** After rows were written to LMDB around the board (newer than some it holds), or at the builder's start: no row stays published. */
  clear(): void {
    this.#clearHalf(this.half(0));
    this.#clearHalf(this.half(1));
    // Two epochs on: the same half stays current, and every read under way copies again.
    Atomics.add(this.words, EPOCH, 2);
  }

  #clearHalf(base: number): void {
    // Keys only: a reader then finds no row of this half (the epoch's Atomics.store after a flip
    // orders these before any reuse of the arena's words).
    this.words.fill(0, base + KEYS, base + KEYS + SLOTS);
    this.words[base + USED] = 0;
    this.words[base + ROWS] = 0;
  }
}
