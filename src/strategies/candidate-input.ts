/**
 * @module strategies/candidate-input
 * What a strategy hands the kernel for one ranking, in growable typed memory reused across
 * rankings: seeds, each with a row of (ix, weight) entries, a pool of extra candidates, a
 * context vector and the priors' weights. The engine turns it into the kernel's RankInput.
 */
import { grown, withRoom } from '../domain/grown.ts';

/** A ranked list as the serving signals keep it: ix, best first, and each one's score. */
export interface TopList {
  ix: Uint32Array;
  /** Score of each entry (f32), best first. */
  weight: Float32Array;
}

/** An item's neighbour rows as a ranking worker reads them (serving/neighbour-rows.ts). */
export interface NeighbourRowSource {
  /** Where ix's row is (read on demand), for the accessors below. */
  row(ix: number): number;
  ixOf(at: number): Uint32Array;
  weightOf(at: number): Float32Array;
  offsetOf(at: number): number;
  lengthOf(ix: number): number;
}

const NO_IX = new Uint32Array(0);
const DAY = 86_400;
/** The recency prior's half-life unless a strategy sets its own. */
export const RECENCY_HALF_LIFE_SEC = 7 * DAY;

export class CandidateInput {
  seedWeight = new Float32Array(64);
  seedTime = new Uint32Array(64);
  offsets = new Uint32Array(65);
  nbIx = new Uint32Array(4096);
  nbWeight = new Float32Array(4096);
  /** Seeds and row entries used. */
  m = 0;
  t = 0;
  /** Extra candidates with score 0 before priors. */
  pool: Uint32Array = NO_IX;
  /** Content similarity to this vector counts contentWeight (null: no content term). */
  context: Float32Array | null = null;
  popularityWeight = 0;
  recencyWeight = 0;
  recencyHalfLifeSec = RECENCY_HALF_LIFE_SEC;
  contentWeight = 0;
  readonly #contextVector: Float32Array;
  #poolBuffer = new Uint32Array(256);

  constructor(vectorDim: number) {
    this.#contextVector = new Float32Array(vectorDim);
  }

  reset(): void {
    this.m = 0;
    this.t = 0;
    this.offsets[0] = 0;
    this.pool = NO_IX;
    this.context = null;
    this.popularityWeight = 0;
    this.recencyWeight = 0;
    this.recencyHalfLifeSec = RECENCY_HALF_LIFE_SEC;
    this.contentWeight = 0;
  }

  /** Starts the context vector at zero; strategies add item vectors to it, then normaliseContext. */
  startContext(): Float32Array {
    return (this.context = this.#contextVector.fill(0));
  }

  normaliseContext(): void {
    const v = this.context;
    if (!v) return;
    let norm = 0;
    for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
    if (norm === 0) return;
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < v.length; d++) v[d]! *= scale;
  }

  /** Makes `ix` (a strategy's reused array) the pool, copied into reused memory. */
  setPool(ix: readonly number[]): void {
    this.#poolBuffer = withRoom(this.#poolBuffer, ix.length);
    for (let i = 0; i < ix.length; i++) this.#poolBuffer[i] = ix[i]!;
    this.pool = this.#poolBuffer.subarray(0, ix.length);
  }

  /** Adds a seed whose row comes after (addRow, addNeighbours, addEntry). */
  addSeed(weight: number, time: number): void {
    if (this.m + 2 > this.seedWeight.length) {
      this.seedWeight = grown(this.seedWeight, this.m * 2);
      this.seedTime = grown(this.seedTime, this.m * 2);
      this.offsets = grown(this.offsets, this.m * 2 + 1);
    }
    this.seedWeight[this.m] = weight;
    this.seedTime[this.m] = time;
    this.m++;
    this.offsets[this.m] = this.t;
  }

  #reserve(extra: number): void {
    if (this.t + extra <= this.nbIx.length) return;
    const size = Math.max(this.t + extra, this.nbIx.length * 2);
    this.nbIx = grown(this.nbIx, size);
    this.nbWeight = grown(this.nbWeight, size);
  }

  /** Appends the first `max` entries of a row (neighbours, or a ranked list) as the last seed's row. */
  addRow(row: TopList, max: number): void {
    this.addEntries(row.ix, row.weight, 0, Math.min(max, row.ix.length));
  }

  /** A ranked list's first `depth` entries as one seed's row; false when the list is empty. */
  addRankedList(list: TopList, depth: number): boolean {
    if (list.ix.length === 0) return false;
    this.addSeed(1, 0);
    this.addRow(list, depth);
    return true;
  }

  /** Appends the first `max` entries of item `ix`'s neighbour row as the last seed's row. */
  addNeighbours(rows: NeighbourRowSource, ix: number, max: number): void {
    const at = rows.row(ix);
    this.addEntries(rows.ixOf(at), rows.weightOf(at), rows.offsetOf(at), Math.min(max, rows.lengthOf(ix)));
  }

  /** Appends entries [start, start + n) of (ix, weight) arrays as the last seed's row. */
  addEntries(ix: Uint32Array, weight: Float32Array, start: number, n: number): void {
    this.#reserve(n);
    const t = this.t;
    for (let k = 0; k < n; k++) {
      this.nbIx[t + k] = ix[start + k]!;
      this.nbWeight[t + k] = weight[start + k]!;
    }
    this.t += n;
    this.offsets[this.m] = this.t;
  }

  /** Appends one entry to the last seed's row. */
  addEntry(ix: number, weight: number): void {
    this.#reserve(1);
    this.nbIx[this.t] = ix;
    this.nbWeight[this.t] = weight;
    this.t++;
    this.offsets[this.m] = this.t;
  }
}
