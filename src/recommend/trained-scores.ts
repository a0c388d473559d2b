/**
 * @module recommend/trained-scores
 * A ranking worker's reader of one environment's trained model (store/trained-model.ts): turns
 * a user's history into model scores (Σ over history items of weight × their row of B) or an
 * item into its row, and hands the best of them to the kernel as one virtual neighbour row,
 * strongest = 1. Rows are read from LMDB once per model version into the dense scorer (WASM
 * memory, maxItems² f32 at most: 16 MB at the default 2,000 items), where the sums run as SIMD:
 * copying rows out of LMDB and summing them in JavaScript per request halved the API's
 * throughput. The model version is re-read at every sync; a new version replaces the rows
 * whole, so one request never mixes two versions. Never builds anything.
 */
import type { TrainedModelConfig } from '../config/types.ts';
import type { Store } from '../store/open.ts';
import { readTrainedItems, readTrainedMeta, trainedRowKey } from '../store/trained-model.ts';
import type { CatalogView } from './catalog-view.ts';
import { DenseScorer } from './dense-scorer.ts';
import type { TopList } from './signals.ts';

/** Entries kept per item row: the list's 50 and room for the request's exclusions. */
const ITEM_ROW_KEPT = 100;
/** Item rows kept per version (~1 KB each); all dropped when full. */
const MAX_ITEM_ROWS = 50_000;

export class TrainedScores {
  readonly #store: Store;
  readonly #view: CatalogView;
  readonly #dense = new DenseScorer();
  readonly #config: TrainedModelConfig;
  #version = 0;
  /** Item ix of each model column. */
  #items: Uint32Array = new Uint32Array(0);
  /** Model column of each ix, -1 when the model does not cover it. */
  #columnOf = new Int32Array(0);
  /** Columns whose row is missing or malformed in LMDB. */
  #missing = new Set<number>();
  /**
   * Per item of the model, its row's ITEM_ROW_KEPT best positive entries (ix, weight / best),
   * read once per version: an item-to-item list asks for the same popular context items again
   * and again, and selecting from a dense row per request was most of its trained-model cost.
   */
  #itemRows = new Map<number, TopList | null>();

  constructor(store: Store, view: CatalogView, config: TrainedModelConfig) {
    this.#store = store;
    this.#view = view;
    this.#config = config;
  }

  /** Follows the `current` pointer; call once per batch, after the read snapshot was renewed. */
  refresh(): void {
    if (!this.#config.enabled) return;
    const meta = readTrainedMeta(this.#store, this.#view.environment);
    const version = meta?.version ?? 0;
    if (version === this.#version) return;
    this.#version = version;
    this.#items = version > 0 ? readTrainedItems(this.#store, this.#view.environment, version) : new Uint32Array(0);
    const n = this.#items.length;
    let maxIx = 0;
    for (let c = 0; c < n; c++) if (this.#items[c]! > maxIx) maxIx = this.#items[c]!;
    this.#columnOf = new Int32Array(n > 0 ? maxIx + 1 : 0).fill(-1);
    for (let c = 0; c < n; c++) this.#columnOf[this.#items[c]!] = c;
    this.#dense.reset(n);
    this.#missing.clear();
    this.#itemRows.clear();
  }

  /** The serving version (0 when none). */
  get version(): number {
    return this.#version;
  }

  #column(ix: number): number {
    return ix < this.#columnOf.length ? this.#columnOf[ix]! : -1;
  }

  /** Adds weight × row `column` of B to the scores (reading the row once per version); false when it is missing. */
  #addRow(column: number, weight: number): boolean {
    if (!this.#dense.hasRow(column)) {
      if (this.#missing.has(column)) return false;
      const bytes = this.#store.model.get(trainedRowKey(this.#view.environment, this.#version, column));
      if (!bytes || bytes.byteLength !== this.#dense.size * 4) {
        this.#missing.add(column);
        return false;
      }
      this.#dense.setRow(column, bytes);
    }
    this.#dense.add(column, weight);
    return true;
  }

  /**
   * The `max` best-scored items for a user whose history is `seeds` (ix → weight), without
   * `exclude` (the kernel filters disabled and expired ones); weights scaled so the best is 1.
   * Undefined when no model serves or no seed is covered by it.
   */
  forSeeds(seeds: ReadonlyArray<readonly [ix: number, weight: number]>, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    this.#dense.scores.fill(0);
    let used = 0;
    for (const [ix, weight] of seeds) {
      const c = this.#column(ix);
      if (c >= 0 && weight > 0 && this.#addRow(c, weight)) used++;
    }
    return used > 0 ? this.#best(exclude, max) : undefined;
  }

  /**
   * The `max` items whose scores `ix` raises most (its row of B), as forSeeds, from the row's
   * best ITEM_ROW_KEPT entries (exclusions beyond that many leave the list shorter).
   */
  forItem(ix: number, exclude: readonly number[], max: number): TopList | undefined {
    if (this.#version === 0) return undefined;
    let row = this.#itemRows.get(ix);
    if (row === undefined) {
      const c = this.#column(ix);
      this.#dense.scores.fill(0);
      row = c >= 0 && this.#addRow(c, 1) ? (this.#best([ix], ITEM_ROW_KEPT) ?? null) : null;
      if (this.#itemRows.size >= MAX_ITEM_ROWS) this.#itemRows.clear();
      this.#itemRows.set(ix, row);
    }
    if (!row) return undefined;
    const ixs = new Uint32Array(Math.min(max, row.ix.length));
    const weight = new Float32Array(ixs.length);
    let k = 0;
    for (let i = 0; i < row.ix.length && k < max; i++) {
      if (exclude.includes(row.ix[i]!)) continue;
      ixs[k] = row.ix[i]!;
      weight[k++] = row.weight[i]!;
    }
    if (k === 0) return undefined;
    // Strongest = 1 after the exclusions, as #best scales its lists.
    const top = weight[0]!;
    for (let i = 0; i < k; i++) weight[i]! /= top;
    return { ix: ixs.subarray(0, k), weight: weight.subarray(0, k) };
  }

  #best(exclude: readonly number[], max: number): TopList | undefined {
    // Disabled or expired items are left to the kernel's filter (rare; checking every covered
    // item here cost more than the rest of the selection). Exclusions are applied: a user's
    // consumed items are often the model's strongest scores.
    const scores = this.#dense.scores;
    for (const ix of exclude) {
      const c = this.#column(ix);
      if (c >= 0) scores[c] = -Infinity;
    }
    const best = this.#dense.top(max);
    if (best.length === 0) return undefined;
    const top = scores[best[0]!]!;
    if (!(top > 0)) return undefined;
    // Only positive scores: a negative one says "less likely than knowing nothing".
    let k = 0;
    while (k < best.length && scores[best[k]!]! > 0) k++;
    const ix = new Uint32Array(k);
    const weight = new Float32Array(k);
    for (let i = 0; i < k; i++) {
      ix[i] = this.#items[best[i]!]!;
      weight[i] = scores[best[i]!]! / top;
    }
    return { ix, weight };
  }
}
