/**
 * @module recommend/trained-scores
 * A ranking worker's reader of one environment's trained model (store/trained-model.ts): turns
 * a user's history into model scores (Σ over history items of weight × their sparse row) or an
 * item into its row, and hands the best of them to the kernel as one virtual neighbour row,
 * strongest = 1. Rows hold at most model.trained.rowLength weights (200 by default), so a history
 * item costs what a co-occurrence seed costs, whatever the catalog's size; the dense n × n
 * scorer this replaced held maxItems² floats per worker and capped the model at 2,000 items.
 * Rows are read from LMDB once per model version into one arena; the version is re-read at
 * every sync and a new one drops them all, so one request never mixes two versions. A row cache
 * of objects (a Map of 30,000 rows, cleared when full) cost 20% of a ranking worker at 100,000
 * items: it thrashed over the 51,000 rows of the model and its copies fed the GC.
 */
import type { TrainedModelConfig } from '../config/types.ts';
import { grown, withRoom } from '../domain/grown.ts';
import { decodeNeighbours } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { readTrainedItems, readTrainedMeta, trainedRowKey } from '../store/trained-model.ts';
import type { CatalogView } from './catalog-view.ts';
import type { TopList } from './signals.ts';

/**
 * Weights read per request at most, over all its history items: rows are stored strongest first,
 * so a long history reads the head of each row. On MovieLens 100k (histories up to 500 items)
 * 32,768 scored as the whole rows did (P@10 0.4217); 16,384 lost 0.004.
 */
const WEIGHTS_PER_REQUEST = 32_768;
/** Weights read per history item at least, however long the history. */
const MIN_WEIGHTS_PER_SEED = 32;

export class TrainedScores {
  readonly #store: Store;
  readonly #view: CatalogView;
  readonly #config: TrainedModelConfig;
  #version = 0;
  /** Item ix of each model column, and the column of each ix (−1: not in the model). */
  #items: Uint32Array = new Uint32Array(0);
  #columnOf = new Int32Array(0);
  /**
   * The version's rows, copied from LMDB on first use into one arena (no object per row, nothing
   * for the GC to trace, never evicted: at most the model's own size, rowLength × 8 bytes per
   * item): row of ix = arena[start[ix] .. start[ix] + length[ix]); start −1 = not read yet. The
   * arena holds model columns, not ix: columns are numbered most consumed first, so the scores
   * a request scatters into are model-sized and their busiest part stays in cache.
   */
  #start = new Int32Array(0);
  #length = new Uint16Array(0);
  #arenaIx = new Uint32Array(0);
  #arenaWeight = new Float32Array(0);
  #arenaUsed = 0;
  /**
   * A request's sums: an open-addressing table of [column + 1, score] pairs (0 = empty), sized
   * per request to twice the weights it reads, so it stays in cache. A model-sized score array
   * (400 KB at 100,000 items) was cold at every request, the rest of the ranking having evicted
   * it: 2,000 scattered adds cost ~150 µs in the engine, against ~35 µs in a tight loop.
   */
  #table = new Uint32Array(0);
  #tableScores = new Float32Array(0);
  /** Slots the current request filled, cleared before it returns. */
  #used = new Uint32Array(0);
  #heapIx = new Uint32Array(0);
  #heapScore = new Float32Array(0);

  constructor(store: Store, view: CatalogView, config: TrainedModelConfig) {
    this.#store = store;
    this.#view = view;
    this.#config = config;
  }

  /** Follows the `current` pointer; call once per batch, after the read snapshot was renewed. */
  refresh(): void {
    if (!this.#config.enabled) return;
    const version = readTrainedMeta(this.#store, this.#view.environment)?.version ?? 0;
    if (version === this.#version) return;
    this.#version = version;
    this.#start.fill(-1);
    this.#arenaUsed = 0;
    this.#items = version > 0 ? readTrainedItems(this.#store, this.#view.environment, version) : new Uint32Array(0);
    let maxIx = -1;
    for (let c = 0; c < this.#items.length; c++) if (this.#items[c]! > maxIx) maxIx = this.#items[c]!;
    this.#columnOf = new Int32Array(maxIx + 1).fill(-1);
    for (let c = 0; c < this.#items.length; c++) this.#columnOf[this.#items[c]!] = c;
  }

  /** The serving version (0 when none). */
  get version(): number {
    return this.#version;
  }

  /** Reads the row of `ix` into the arena if it is not there yet; returns its start (length in #length). */
  #row(ix: number): number {
    if (ix >= this.#start.length) {
      const start = new Int32Array(Math.max(ix + 1, this.#view.capacity)).fill(-1);
      start.set(this.#start);
      const length = new Uint16Array(start.length);
      length.set(this.#length);
      this.#start = start;
      this.#length = length;
    }
    const at = this.#start[ix]!;
    if (at >= 0) return at;
    const stored = decodeNeighbours(this.#store.model.get(trainedRowKey(this.#view.environment, this.#version, ix)));
    const n = stored.ix.length;
    if (this.#arenaUsed + n > this.#arenaIx.length) {
      const size = Math.max(this.#arenaUsed + n, this.#arenaIx.length * 2, 1 << 16);
      this.#arenaIx = grown(this.#arenaIx, size, this.#arenaUsed);
      this.#arenaWeight = grown(this.#arenaWeight, size, this.#arenaUsed);
    }
    const start = this.#arenaUsed;
    // Every entry of a row is a model item; one that is not (a malformed row) is dropped.
    let kept = 0;
    for (let k = 0; k < n; k++) {
      const column = stored.ix[k]! < this.#columnOf.length ? this.#columnOf[stored.ix[k]!]! : -1;
      if (column < 0) continue;
      this.#arenaIx[start + kept] = column;
      this.#arenaWeight[start + kept++] = stored.weight[k]!;
    }
    this.#arenaUsed += kept;
    this.#start[ix] = start;
    this.#length[ix] = kept;
    return start;
  }

  /**
   * The `max` best-scored items for a user whose history is `seeds` (ix → weight), without
   * `exclude` (the kernel filters disabled and expired ones); weights scaled so the best is 1.
   * Undefined when no model serves or no seed is covered by it.
   */
  forSeeds(seedIx: Uint32Array, seedWeight: Float32Array, seeds: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    // A long history reads the strongest part of each row: the request's cost stays bounded.
    const perSeed = Math.max(MIN_WEIGHTS_PER_SEED, Math.floor(WEIGHTS_PER_REQUEST / Math.max(1, seeds)));
    let total = 0;
    for (let s = 0; s < seeds; s++) {
      if (!(seedWeight[s]! > 0)) continue;
      this.#row(seedIx[s]!);
      total += Math.min(perSeed, this.#length[seedIx[s]!]!);
    }
    if (total === 0) return undefined;
    let bits = 6;
    while (1 << bits < 2 * total) bits++;
    const mask = (1 << bits) - 1;
    const shift = 32 - bits;
    if (this.#table.length < 2 << bits) {
      this.#table = new Uint32Array(2 << bits);
      this.#tableScores = new Float32Array(this.#table.buffer);
    }
    this.#used = withRoom(this.#used, total);
    const table = this.#table;
    const sums = this.#tableScores;
    const used = this.#used;
    let count = 0;
    for (let s = 0; s < seeds; s++) {
      const weight = seedWeight[s]!;
      if (!(weight > 0)) continue;
      const seed = seedIx[s]!;
      const start = this.#start[seed]!;
      const end = start + Math.min(perSeed, this.#length[seed]!);
      const rowColumn = this.#arenaIx;
      const rowWeight = this.#arenaWeight;
      for (let e = start; e < end; e++) {
        const key = rowColumn[e]! + 1;
        let slot = Math.imul(key, 0x9e3779b1) >>> shift;
        for (;;) {
          const there = table[2 * slot]!;
          if (there === key) break;
          if (there === 0) {
            table[2 * slot] = key;
            sums[2 * slot + 1] = 0;
            used[count++] = slot;
            break;
          }
          slot = (slot + 1) & mask;
        }
        sums[2 * slot + 1]! += weight * rowWeight[e]!;
      }
    }
    // A user's consumed items are often the model's strongest scores: out before selecting.
    for (const ix of exclude) {
      const key = (ix < this.#columnOf.length ? this.#columnOf[ix]! : -1) + 1;
      if (key === 0) continue;
      for (let slot = Math.imul(key, 0x9e3779b1) >>> shift; table[2 * slot] !== 0; slot = (slot + 1) & mask) {
        if (table[2 * slot] !== key) continue;
        sums[2 * slot + 1] = -Infinity;
        break;
      }
    }
    const best = this.#best(count, max);
    for (let t = 0; t < count; t++) table[2 * used[t]!] = 0;
    return best;
  }

  /** The best `max` of the request's `count` sums, strongest first, weights scaled so the best is 1. */
  #best(count: number, max: number): TopList | undefined {
    const table = this.#table;
    const sums = this.#tableScores;
    const used = this.#used;
    const items = this.#items;
    const catalogSize = this.#view.capacity;
    // A min-heap of the best so far: most candidates fail one comparison with its root.
    const heapIx = this.#heapIx.length >= max ? this.#heapIx : (this.#heapIx = new Uint32Array(max));
    const heapScore = this.#heapScore.length >= max ? this.#heapScore : (this.#heapScore = new Float32Array(max));
    let size = 0;
    for (let t = 0; t < count; t++) {
      const slot = used[t]!;
      const score = sums[2 * slot + 1]!;
      // Only positive scores: a negative one says "less likely than knowing nothing". The score
      // is tested before the item is looked up: most candidates fail against the heap's root.
      if (!(score > 0) || (size === max && !(score > heapScore[0]!))) continue;
      const ix = items[table[2 * slot]! - 1]!;
      // Only items the catalog view knows (one created a moment ago may not be there yet).
      if (ix >= catalogSize) continue;
      if (size < max) {
        let at = size++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (heapScore[parent]! <= score) break;
          heapIx[at] = heapIx[parent]!;
          heapScore[at] = heapScore[parent]!;
          at = parent;
        }
        heapIx[at] = ix;
        heapScore[at] = score;
      } else {
        let at = 0;
        for (;;) {
          let child = 2 * at + 1;
          if (child >= size) break;
          if (child + 1 < size && heapScore[child + 1]! < heapScore[child]!) child++;
          if (heapScore[child]! >= score) break;
          heapIx[at] = heapIx[child]!;
          heapScore[at] = heapScore[child]!;
          at = child;
        }
        heapIx[at] = ix;
        heapScore[at] = score;
      }
    }
    if (size === 0) return undefined;
    // Strongest first: insertion sort of the few kept.
    const ix = heapIx.slice(0, size);
    const weight = heapScore.slice(0, size);
    for (let i = 1; i < size; i++) {
      const w = weight[i]!;
      const x = ix[i]!;
      let j = i - 1;
      while (j >= 0 && weight[j]! < w) {
        weight[j + 1] = weight[j]!;
        ix[j + 1] = ix[j]!;
        j--;
      }
      weight[j + 1] = w;
      ix[j + 1] = x;
    }
    const top = weight[0]!;
    for (let i = 0; i < size; i++) weight[i]! /= top;
    return { ix, weight };
  }

  /** The `max` items `ix` raises most (its row's positive weights, strongest first), without `exclude`. */
  forItem(ix: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    const start = this.#row(ix);
    const end = start + this.#length[ix]!;
    const ixs = new Uint32Array(Math.min(max, end - start));
    const weight = new Float32Array(ixs.length);
    let k = 0;
    // Rows are stored by magnitude: the positive weights among them are in decreasing order.
    for (let e = start; e < end && k < max; e++) {
      const w = this.#arenaWeight[e]!;
      const other = this.#items[this.#arenaIx[e]!]!;
      if (!(w > 0) || other >= this.#view.capacity || exclude.includes(other)) continue;
      ixs[k] = other;
      weight[k++] = w;
    }
    if (k === 0) return undefined;
    const top = weight[0]!;
    for (let i = 0; i < k; i++) weight[i]! /= top;
    return { ix: ixs.subarray(0, k), weight: weight.subarray(0, k) };
  }
}
