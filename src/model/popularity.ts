/**
 * @module model/popularity
 * Weighted consumption counts per item: all-time, and per UTC hour for trending lists. Dense
 * f32 arrays by item index, grown as the environment's index grows.
 */
import type { Store } from '../store/open.ts';
import { bytesOf, copyF32, popularityKey } from '../store/model.ts';

export const SECONDS_PER_BUCKET = 3600;

export class PopularityUpdates {
  readonly #store: Store;
  readonly #env: string;
  readonly #deltas = new Map<number | 'all', Map<number, number>>();

  constructor(store: Store, env: string) {
    this.#store = store;
    this.#env = env;
  }

  add(ix: number, unixSec: number, w: number): void {
    if (w <= 0) return;
    for (const bucket of ['all', Math.floor(unixSec / SECONDS_PER_BUCKET)] as const) {
      let row = this.#deltas.get(bucket);
      if (!row) {
        row = new Map();
        this.#deltas.set(bucket, row);
      }
      row.set(ix, (row.get(ix) ?? 0) + w);
    }
  }

  flush(): void {
    for (const [bucket, row] of this.#deltas) {
      const key = popularityKey(this.#env, bucket);
      let counts = copyF32(this.#store.model.get(key));
      let maxIx = -1;
      for (const ix of row.keys()) if (ix > maxIx) maxIx = ix;
      if (maxIx >= counts.length) {
        const grown = new Float32Array(Math.max(maxIx + 1, counts.length * 2));
        grown.set(counts);
        counts = grown;
      }
      for (const [ix, w] of row) counts[ix] = counts[ix]! + w;
      this.#store.model.put(key, bytesOf(counts));
    }
    this.#deltas.clear();
  }
}
