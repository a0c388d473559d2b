/**
 * @module model/cooccurrence
 * Item-item co-occurrence: when a user consumes item i after items j in their recent history,
 * both i→j and j→i gain the configured weight of the new consumption. Rows live in memory
 * (loaded from LMDB on first touch) and dirty ones are written at each flush. Between flushes a
 * row is cut back to its strongest `maxNeighbours` only once it holds twice that many, so the
 * cut (a sort) is paid rarely per event; at a flush each dirty row is sorted once and written
 * as store/model.ts lays it out (strongest first, at most maxNeighbours), and the row in memory
 * is cut to what was written, so a restart resumes from exactly the state it would have kept.
 */
import type { Store } from '../store/open.ts';
import { decodeNeighbours, encodeNeighbours, neighboursKey } from '../store/model.ts';

type Row = Map<number, number>;

export class CooccurrenceState {
  readonly #store: Store;
  readonly #env: string;
  readonly #maxNeighbours: number;
  readonly #rows = new Map<number, Row>();
  readonly #dirty = new Set<number>();

  constructor(store: Store, env: string, maxNeighbours: number) {
    this.#store = store;
    this.#env = env;
    this.#maxNeighbours = maxNeighbours;
  }

  #row(ix: number): Row {
    let row = this.#rows.get(ix);
    if (!row) {
      row = new Map();
      const stored = decodeNeighbours(this.#store.model.get(neighboursKey(this.#env, ix)));
      for (let i = 0; i < stored.ix.length; i++) row.set(stored.ix[i]!, stored.weight[i]!);
      this.#rows.set(ix, row);
    }
    return row;
  }

  #add(from: number, to: number, w: number): void {
    const row = this.#row(from);
    row.set(to, (row.get(to) ?? 0) + w);
    this.#dirty.add(from);
    if (row.size > 2 * this.#maxNeighbours) this.#cut(row);
  }

  /** Cuts the row to its strongest `maxNeighbours` and returns them, strongest first. */
  #cut(row: Row): Array<[number, number]> {
    const strongest = [...row].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, this.#maxNeighbours);
    if (strongest.length < row.size) {
      row.clear();
      for (const [ix, w] of strongest) row.set(ix, w);
    }
    return strongest;
  }

  addPair(a: number, b: number, w: number): void {
    if (a === b || w <= 0) return;
    this.#add(a, b, w);
    this.#add(b, a, w);
  }

  prepareFlush(): () => void {
    const writes: Array<[number, Buffer]> = [];
    const ixs: number[] = [];
    const weights: number[] = [];
    for (const ix of this.#dirty) {
      const strongest = this.#cut(this.#rows.get(ix)!);
      ixs.length = 0;
      weights.length = 0;
      for (const [j, w] of strongest) {
        ixs.push(j);
        weights.push(w);
      }
      writes.push([ix, encodeNeighbours(ixs, weights, ixs.length)]);
    }
    this.#dirty.clear();
    return () => {
      for (const [ix, bytes] of writes) this.#store.model.put(neighboursKey(this.#env, ix), bytes);
    };
  }

  trim(max: number): void {
    if (this.#rows.size > max) this.#rows.clear();
  }
}
