/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Deltas of a chunk are summed in memory, then each
 * touched item's neighbour list is merged, cut to the strongest `maxNeighbours` and rewritten.
 */
import type { Store } from '../store/open.ts';
import { decodeNeighbours, encodeNeighbours, neighboursKey } from '../store/model.ts';

export class CooccurrenceUpdates {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  readonly #deltas = new Map<number, Map<number, number>>();

  constructor(store: Store, env: string, maxNeighbours: number) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
  }

  #add(from: number, to: number, w: number): void {
    let row = this.#deltas.get(from);
    if (!row) {
      row = new Map();
      this.#deltas.set(from, row);
    }
    row.set(to, (row.get(to) ?? 0) + w);
  }

  addPair(a: number, b: number, w: number): void {
    if (a === b || w <= 0) return;
    this.#add(a, b, w);
    this.#add(b, a, w);
  }

  flush(): void {
    const ixs: number[] = [];
    const weights: number[] = [];
    for (const [ix, row] of this.#deltas) {
      const key = neighboursKey(this.#env, ix);
      const current = decodeNeighbours(this.#store.model.get(key));
      for (let i = 0; i < current.ix.length; i++) {
        const j = current.ix[i]!;
        row.set(j, (row.get(j) ?? 0) + current.weight[i]!);
      }
      const sorted = [...row].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
      const n = Math.min(sorted.length, this.#maxNeighbours);
      ixs.length = 0;
      weights.length = 0;
      for (let i = 0; i < n; i++) {
        ixs.push(sorted[i]![0]);
        weights.push(sorted[i]![1]);
      }
      this.#store.model.put(key, encodeNeighbours(ixs, weights, n));
    }
    this.#deltas.clear();
  }
}
