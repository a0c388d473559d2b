/**
 * @module serving/trained-scores
 * A ranking worker's reader of one environment's trained model (store/trained-model.ts): turns
 * a user's history into model scores (Σ over history items of weight × their sparse row) or an
 * item into its row, and hands the best of them to the kernel as one virtual neighbour row,
 * strongest = 1. Rows hold at most model.trained.rowLength weights (200 by default), so a history
 * item costs what a co-occurrence seed costs, whatever the catalog's size; the dense n × n
 * scorer this replaced held maxItems² floats per worker and capped the model at 2,000 items.
 * Rows are read from LMDB once per model version into one arena; the version is re-read at
 * every sync and a new one drops them all, so one request never mixes two versions. A new
 * version's rows are read ahead a slice per batch, most consumed items first (warm): read on
 * demand, a request's ~20 rows cost ~20 µs more for minutes after every switch (perf, 100,000
 * items: LMDB lookups were a tenth of the ranking worker). A row cache
 * of objects (a Map of 30,000 rows, cleared when full) cost 20% of a ranking worker at 100,000
 * items: it thrashed over the 51,000 rows of the model and its copies fed the GC.
 */
import type { TrainedModelConfig } from '../config/types.ts';
import { withRoom } from '../domain/grown.ts';
import { NeighbourRowReader } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import { hasColumnPairs, legacyTrainedRowKey, PAIR_BYTES, readTrainedItems, readTrainedMeta, trainedRowKey } from '../store/trained-model.ts';
import type { CatalogView } from './catalog-view.ts';
import type { TopList } from '../strategies/candidate-input.ts';
import { TrainedKernel } from '../ranker/trained-kernel.ts';

/**
 * Weights read per request at most, over all its history items: rows are stored strongest first,
 * so a long history reads the head of each row. On MovieLens 100k (histories up to 500 items)
 * 32,768 scored as the whole rows did (P@10 0.4217); 16,384 lost 0.004.
 */
const WEIGHTS_PER_REQUEST = 32_768;
/** Weights read per history item at least, however long the history. */
const MIN_WEIGHTS_PER_SEED = 32;
/** Entries a row may hold (its length is kept in a Uint16Array); a longer stored row is malformed. */
const MAX_ROW_ENTRIES = 0xffff;
/** Rows warm() reads between two looks at the clock (~4 µs each). */
const WARM_ROWS_PER_CHECK = 16;

/**
 * The factor a history item's row is multiplied by in a history of `historyItems` items:
 * 1 / largest^(k / (k + historyItems)), `largest` the row's largest |weight|. A one-item history
 * (k = 2) divides by largest^(2/3), ten items by largest^(1/6): a short history weighs its items
 * alike, as item-kNN's normalised neighbours do, and a long one sums the rows as learned (on
 * MovieLens, dividing every row whole cost 0.009 of P@10). 1 when k is 0 or the row is empty.
 */
export function seedRowScale(largest: number, k: number, historyItems: number): number {
  if (!(k > 0) || !(largest > 0) || !Number.isFinite(largest)) return 1;
  return largest ** (-k / (k + Math.max(1, historyItems)));
}

export class TrainedScores {
  readonly #store: Store;
  readonly #view: CatalogView;
  readonly #config: TrainedModelConfig;
  #version = 0;
  /** Item ix of each model column, and the column of each ix (−1: not in the model). */
  #items: Uint32Array = new Uint32Array(0);
  #columnOf = new Int32Array(0);
  /**
   * The version's rows, copied from LMDB on first use into the kernel's arena (no object per
   * row, nothing for the GC to trace, never evicted: at most the model's own size, rowLength × 8
   * bytes per item): row of ix = arena entries [start[ix], start[ix] + length[ix]); start −1 = not
   * read yet. The arena holds model columns, not ix: columns are numbered most consumed first, so
   * the sums a request scatters into stay small and their busiest part in cache.
   */
  #start = new Int32Array(0);
  #length = new Uint16Array(0);
  readonly #kernel: TrainedKernel;
  /** A request's seeds as the kernel takes them, and its excluded columns, in reused memory. */
  #seedStart = new Uint32Array(0);
  #seedCount = new Uint32Array(0);
  #seedWeight = new Float32Array(0);
  #excludeColumns = new Uint32Array(0);
  /** forSeeds' answer, valid until its next call. */
  #userTopIx = new Uint32Array(0);
  #userTopWeight = new Float32Array(0);
  /** forItem's answer, valid until its next call. */
  #itemTopIx = new Uint32Array(0);
  #itemTopWeight = new Float32Array(0);
  /** A row read from LMDB, as model columns, before it goes to the arena. */
  #rowColumns = new Uint32Array(0);
  #rowWeights = new Float32Array(0);
  readonly #reader = new NeighbourRowReader();
  /** The next model column whose row warm() reads. */
  #warmColumn = 0;
  /** The version's rows are `cols` rows, copied as they are (else `row` rows, mapped from ix). */
  #columnPairs = false;

  constructor(store: Store, view: CatalogView, config: TrainedModelConfig) {
    this.#store = store;
    this.#view = view;
    this.#config = config;
    this.#kernel = new TrainedKernel();
  }

  /** Follows the `current` pointer; call once per batch, after the read snapshot was renewed. */
  refresh(): void {
    if (!this.#config.enabled) return;
    const version = readTrainedMeta(this.#store, this.#view.environment)?.version ?? 0;
    if (version === this.#version) return;
    this.#version = version;
    this.#columnPairs = version > 0 && hasColumnPairs(this.#store, this.#view.environment, version);
    this.#warmColumn = 0;
    this.#start.fill(-1);
    this.#items = version > 0 ? readTrainedItems(this.#store, this.#view.environment, version) : new Uint32Array(0);
    this.#kernel.reset(this.#items);
    let maxIx = -1;
    for (let c = 0; c < this.#items.length; c++) if (this.#items[c]! > maxIx) maxIx = this.#items[c]!;
    this.#columnOf = new Int32Array(maxIx + 1).fill(-1);
    for (let c = 0; c < this.#items.length; c++) this.#columnOf[this.#items[c]!] = c;
  }

  /**
   * Reads rows not read yet until `deadlineMs` (performance.now()), in column order: columns are
   * numbered most consumed first, so the rows requests need most come first.
   */
  warm(deadlineMs: number): void {
    const items = this.#items;
    while (this.#warmColumn < items.length) {
      const end = Math.min(items.length, this.#warmColumn + WARM_ROWS_PER_CHECK);
      for (let c = this.#warmColumn; c < end; c++) this.#row(items[c]!);
      this.#warmColumn = end;
      if (performance.now() >= deadlineMs) return;
    }
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
    return this.#columnPairs ? this.#readPairs(ix) : this.#readLegacy(ix);
  }

  /** A `cols` row: one copy into the arena, then a pass over its columns (a malformed row reads as empty). */
  #readPairs(ix: number): number {
    const bytes = this.#store.model.getBinaryFast(trainedRowKey(this.#view.environment, this.#version, ix));
    const n = bytes && bytes.length % PAIR_BYTES === 0 && bytes.length / PAIR_BYTES <= MAX_ROW_ENTRIES ? bytes.length / PAIR_BYTES : 0;
    const start = n > 0 ? this.#kernel.appendPairs(bytes!, n) : 0;
    const { words, first } = this.#kernel.arena;
    let valid = true;
    for (let e = first + 2 * start, end = e + 2 * n; e < end; e += 2) if (words[e]! >= this.#items.length) valid = false;
    this.#start[ix] = start;
    this.#length[ix] = valid ? n : 0;
    return start;
  }

  /** A `row` row of a version written before the layout key: item ix mapped to model columns. */
  #readLegacy(ix: number): number {
    // Read from LMDB's reused buffer into reused words (warm() reads a whole version at a switch):
    // stored as [n, ix × n, f32 weight × n] (store/model-layout.ts); a malformed value reads as empty.
    const stored = this.#reader;
    const n = stored.read(this.#store.model.getBinaryFast(legacyTrainedRowKey(this.#view.environment, this.#version, ix)));
    const columns = (this.#rowColumns = withRoom(this.#rowColumns, n));
    const weights = (this.#rowWeights = withRoom(this.#rowWeights, n));
    // Every entry of a row is a model item; one that is not (a malformed row) is dropped.
    let kept = 0;
    for (let k = 0; k < n; k++) {
      const other = stored.ix(k);
      const column = other < this.#columnOf.length ? this.#columnOf[other]! : -1;
      if (column < 0) continue;
      columns[kept] = column;
      weights[kept++] = stored.weight(k);
    }
    const start = this.#kernel.append(columns, weights, kept);
    this.#start[ix] = start;
    this.#length[ix] = kept;
    return start;
  }

  /**
   * The `max` best-scored items for a user whose history is `seeds` (ix → weight), without
   * `exclude` (the kernel filters disabled and expired ones); weights scaled so the best is 1.
   * Each seed's row counts times seedRowScale (model.trained.shortHistoryItems), n = `seeds`.
   * Undefined when no model serves or no seed is covered by it; in memory reused by the next call.
   */
  forSeeds(seedIx: Uint32Array, seedWeight: Float32Array, seeds: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    // A long history reads the strongest part of each row: the request's cost stays bounded.
    const perSeed = Math.max(MIN_WEIGHTS_PER_SEED, Math.floor(WEIGHTS_PER_REQUEST / Math.max(1, seeds)));
    const starts = (this.#seedStart = withRoom(this.#seedStart, seeds));
    const counts = (this.#seedCount = withRoom(this.#seedCount, seeds));
    const weights = (this.#seedWeight = withRoom(this.#seedWeight, seeds));
    let used = 0;
    for (let s = 0; s < seeds; s++) {
      if (!(seedWeight[s]! > 0)) continue;
      const start = this.#row(seedIx[s]!);
      const count = Math.min(perSeed, this.#length[seedIx[s]!]!);
      if (count === 0) continue;
      starts[used] = start;
      counts[used] = count;
      weights[used++] = seedWeight[s]!;
    }
    if (used === 0) return undefined;
    const k = this.#config.shortHistoryItems;
    if (k > 0) {
      // After every row is read: reading one may move the arena. A row's first entry is its largest |w|.
      const { floats, first } = this.#kernel.arena;
      for (let s = 0; s < used; s++) weights[s]! *= seedRowScale(Math.abs(floats[first + 2 * starts[s]! + 1]!), k, seeds);
    }
    const columns = (this.#excludeColumns = withRoom(this.#excludeColumns, exclude.length));
    let excluded = 0;
    for (const ix of exclude) {
      const column = ix < this.#columnOf.length ? this.#columnOf[ix]! : -1;
      if (column >= 0) columns[excluded++] = column;
    }
    const best = this.#kernel.top(starts, counts, weights, used, columns, excluded, this.#view.capacity, max);
    const n = best.ix.length;
    if (n === 0) return undefined;
    // Reused memory, as forItem's: the engine keeps the list for one request only.
    const ix = (this.#userTopIx = withRoom(this.#userTopIx, n)).subarray(0, n);
    const weight = (this.#userTopWeight = withRoom(this.#userTopWeight, n)).subarray(0, n);
    ix.set(best.ix);
    const top = best.score[0]!;
    for (let i = 0; i < n; i++) weight[i] = best.score[i]! / top;
    return { ix, weight };
  }

  /**
   * The `max` items `ix` raises most (its row's positive weights, strongest first), without
   * `exclude`; in memory reused by the next call.
   */
  forItem(ix: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    const start = this.#row(ix);
    const end = start + this.#length[ix]!;
    // Reused memory: the engine copies the list into its kernel input at once.
    const ixs = (this.#itemTopIx = withRoom(this.#itemTopIx, max));
    const weight = (this.#itemTopWeight = withRoom(this.#itemTopWeight, max));
    let k = 0;
    const { words, floats, first } = this.#kernel.arena;
    // Rows are stored by magnitude: the positive weights among them are in decreasing order.
    for (let e = start; e < end && k < max; e++) {
      const w = floats[first + 2 * e + 1]!;
      const other = this.#items[words[first + 2 * e]!]!;
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
