/**
 * @module recommend/trained-scores
 * A ranking worker's reader of one environment's trained model (store/trained-model.ts): turns
 * a user's history into model scores (Σ over history items of weight × their sparse row) or an
 * item into its row, and hands the best of them to the kernel as one virtual neighbour row,
 * strongest = 1. Rows hold at most model.trained.rowLength weights (200 by default), so a history
 * item costs what a co-occurrence seed costs, whatever the catalog's size; the dense n × n
 * scorer this replaced held maxItems² floats per worker and capped the model at 2,000 items.
 * Rows are read from LMDB once per model version and kept (bounded); the version is re-read at
 * every sync and a new one drops them all, so one request never mixes two versions.
 */
import type { TrainedModelConfig } from '../config/types.ts';
import { selectLargest, sortByKey } from '../domain/select-largest.ts';
import { decodeNeighbours, type Neighbours } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { readTrainedMeta, trainedRowKey } from '../store/trained-model.ts';
import type { CatalogView } from './catalog-view.ts';
import type { TopList } from './signals.ts';

/** Rows kept per version (~1.6 KB each at 200 weights); all dropped when full. */
const MAX_ROWS = 30_000;
const NO_ROW: Neighbours = { ix: new Uint32Array(0), weight: new Float32Array(0) };

export class TrainedScores {
  readonly #store: Store;
  readonly #view: CatalogView;
  readonly #config: TrainedModelConfig;
  #version = 0;
  readonly #rows = new Map<number, Neighbours>();
  /** Scores by ix; an entry counts only when its stamp is the current request's. */
  #scores = new Float32Array(0);
  #stamps = new Uint32Array(0);
  #stamp = 0;
  /** The ix scored by the current request. */
  #touched = new Uint32Array(0);
  readonly #byScore = (ix: number) => this.#scores[ix]!;

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
    this.#rows.clear();
  }

  /** The serving version (0 when none). */
  get version(): number {
    return this.#version;
  }

  #row(ix: number): Neighbours {
    let row = this.#rows.get(ix);
    if (row) return row;
    const stored = decodeNeighbours(this.#store.model.get(trainedRowKey(this.#view.environment, this.#version, ix)));
    row = stored.ix.length > 0 ? stored : NO_ROW;
    if (this.#rows.size >= MAX_ROWS) this.#rows.clear();
    this.#rows.set(ix, row);
    return row;
  }

  /** Starts a request's sums over ix < capacity. */
  #reset(): void {
    const capacity = this.#view.capacity;
    if (this.#scores.length < capacity) {
      this.#scores = new Float32Array(capacity);
      this.#stamps = new Uint32Array(capacity);
      this.#touched = new Uint32Array(capacity);
      this.#stamp = 0;
    }
    this.#stamp++;
  }

  /**
   * The `max` best-scored items for a user whose history is `seeds` (ix → weight), without
   * `exclude` (the kernel filters disabled and expired ones); weights scaled so the best is 1.
   * Undefined when no model serves or no seed is covered by it.
   */
  forSeeds(seeds: ReadonlyArray<readonly [ix: number, weight: number]>, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    this.#reset();
    const scores = this.#scores;
    const stamps = this.#stamps;
    const touched = this.#touched;
    const stamp = this.#stamp;
    const capacity = scores.length;
    let count = 0;
    for (const [seed, weight] of seeds) {
      if (!(weight > 0)) continue;
      const row = this.#row(seed);
      for (let e = 0; e < row.ix.length; e++) {
        const ix = row.ix[e]!;
        if (ix >= capacity) continue; // an item the catalog view has not seen yet
        if (stamps[ix] !== stamp) {
          stamps[ix] = stamp;
          scores[ix] = 0;
          touched[count++] = ix;
        }
        scores[ix]! += weight * row.weight[e]!;
      }
    }
    if (count === 0) return undefined;
    // A user's consumed items are often the model's strongest scores: out before selecting.
    for (const ix of exclude) if (ix < capacity && stamps[ix] === stamp) scores[ix] = -Infinity;
    selectLargest(touched, count, max, this.#byScore);
    const kept = Math.min(max, count);
    sortByKey(touched, kept, this.#byScore);
    // Only positive scores: a negative one says "less likely than knowing nothing".
    let k = 0;
    while (k < kept && scores[touched[k]!]! > 0) k++;
    if (k === 0) return undefined;
    const top = scores[touched[0]!]!;
    const ix = touched.slice(0, k);
    const weight = new Float32Array(k);
    for (let i = 0; i < k; i++) weight[i] = scores[ix[i]!]! / top;
    return { ix, weight };
  }

  /** The `max` items `ix` raises most (its row's positive weights, strongest first), without `exclude`. */
  forItem(ix: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    const row = this.#row(ix);
    const ixs = new Uint32Array(Math.min(max, row.ix.length));
    const weight = new Float32Array(ixs.length);
    let k = 0;
    // Rows are stored by magnitude: the positive weights among them are in decreasing order.
    for (let i = 0; i < row.ix.length && k < max; i++) {
      if (!(row.weight[i]! > 0) || exclude.includes(row.ix[i]!)) continue;
      ixs[k] = row.ix[i]!;
      weight[k++] = row.weight[i]!;
    }
    if (k === 0) return undefined;
    const top = weight[0]!;
    for (let i = 0; i < k; i++) weight[i]! /= top;
    return { ix: ixs.subarray(0, k), weight: weight.subarray(0, k) };
  }
}
