/**
 * @module store/row-sorter
 * Sorting a neighbour row as every reader of one orders it: the builder before it writes a row,
 * and the readers of the stored rows and of the shared ones (store/model-layout.ts, store/live-rows.ts).
 */

/** 2^32: the sort key packs an integer weight above a u32 ix. */
const TWO_32 = 4294967296;
/** Largest weight the packed key holds exactly: key < 2^53. */
const MAX_PACKED_WEIGHT = 2 ** 21 - 1;

/**
 * Orders a gathered row strongest first, equal weights by lower ix, into `ix` and `weight`.
 * Integer weights (the configured ones, and their sums) are packed with the ix into one f64 key
 * and sorted natively; others take a comparator sort. Scratch one row long, reused.
 */
export class RowSorter {
  gatheredIx!: Uint32Array;
  gatheredW!: Float32Array;
  ix!: Uint32Array;
  weight!: Float32Array;
  #keys!: Float64Array;
  #order!: Uint32Array;
  readonly #bySlot = (a: number, b: number): number => this.gatheredW[b]! - this.gatheredW[a]! || this.gatheredIx[a]! - this.gatheredIx[b]!;

  constructor(maxLength: number) {
    this.#allocate(maxLength);
  }

  #allocate(length: number): void {
    this.gatheredIx = new Uint32Array(length);
    this.gatheredW = new Float32Array(length);
    this.ix = new Uint32Array(length);
    this.weight = new Float32Array(length);
    this.#keys = new Float64Array(length);
    this.#order = new Uint32Array(length);
  }

  /** Room for rows of `n` entries (a stored row may be longer than the bound: written under a larger one). */
  fit(n: number): void {
    if (n > this.ix.length) this.#allocate(n);
  }

  /** Packs the first `n` gathered entries into keys, ascending weakest first; false when a weight is not a small integer. */
  packKeys(n: number): boolean {
    const keys = this.#keys;
    for (let s = 0; s < n; s++) {
      const weight = this.gatheredW[s]!;
      if (!(weight <= MAX_PACKED_WEIGHT && Number.isInteger(weight))) return false;
      keys[s] = weight * TWO_32 + (TWO_32 - 1 - this.gatheredIx[s]!);
    }
    return true;
  }

  /** The packed key of gathered entry `s` (after packKeys). */
  key(s: number): number {
    return this.#keys[s]!;
  }

  /** Sorts the first `n` gathered entries into `ix` and `weight`. */
  sort(n: number): void {
    if (this.packKeys(n)) {
      const keys = this.#keys;
      keys.subarray(0, n).sort();
      for (let s = 0; s < n; s++) {
        const key = keys[n - 1 - s]!;
        const weight = Math.floor(key / TWO_32);
        this.weight[s] = weight;
        this.ix[s] = TWO_32 - 1 - (key - weight * TWO_32);
      }
      return;
    }
    const order = this.#order;
    for (let s = 0; s < n; s++) order[s] = s;
    order.subarray(0, n).sort(this.#bySlot);
    for (let s = 0; s < n; s++) {
      this.ix[s] = this.gatheredIx[order[s]!]!;
      this.weight[s] = this.gatheredW[order[s]!]!;
    }
  }
}
