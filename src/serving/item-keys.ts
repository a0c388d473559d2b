/**
 * @module serving/item-keys
 * Each item's filter keys (categories at every depth, tags, flags, language, attributes) as ids
 * of one interned table, held in one pooled Uint32Array. At 1,000,000 items a Map of per-item
 * string arrays held 355 MB of a ranking worker's 395 MB heap (every item its own copies of
 * the key strings), and a heap that size made the worker's mark-compacts the light-load p99
 * (issue 11). Pure data, no I/O; one ranking worker's, not shared.
 */
import { grown, quarterMore } from '../domain/grown.ts';

const headroom = (n: number) => quarterMore(n, 1024);

/** Dead pool entries tolerated before a compaction: rewrites are rare, a compaction is O(pool). */
const MIN_DEAD_TO_COMPACT = 1 << 16;

export class ItemKeys {
  readonly #ids = new Map<string, number>();
  /** Key by id. */
  readonly names: string[] = [];
  /** Per ix: where its ids start in `pool`, and how many it has. */
  #start = new Uint32Array(0);
  #count = new Uint32Array(0);
  /** Every item's ids, each item's contiguous; `pool` may be replaced by a write (read it after one). */
  pool = new Uint32Array(1024);
  #used = 0;
  /** Entries of `pool` below #used that no item points at any more. */
  #dead = 0;

  /** The id of a key some item had, or undefined. */
  idOf(name: string): number | undefined {
    return this.#ids.get(name);
  }

  /** The id of a key, given one if it is new. */
  intern(name: string): number {
    let id = this.#ids.get(name);
    if (id === undefined) {
      this.#ids.set(name, (id = this.names.length));
      this.names.push(name);
    }
    return id;
  }

  start(ix: number): number {
    return ix < this.#start.length ? this.#start[ix]! : 0;
  }

  count(ix: number): number {
    return ix < this.#count.length ? this.#count[ix]! : 0;
  }

  /** Makes `ids` (in their order) the keys of ix, replacing what it had. */
  set(ix: number, ids: readonly number[]): void {
    if (ix >= this.#start.length) {
      const capacity = headroom(ix + 1);
      this.#start = grown(this.#start, capacity);
      this.#count = grown(this.#count, capacity);
    }
    this.#dead += this.#count[ix]!;
    this.#count[ix] = 0;
    if (this.#dead >= MIN_DEAD_TO_COMPACT && this.#dead * 2 > this.#used) this.#compact();
    if (this.#used + ids.length > this.pool.length) this.pool = grown(this.pool, Math.max(headroom(this.pool.length), this.#used + ids.length), this.#used);
    this.#start[ix] = this.#used;
    this.#count[ix] = ids.length;
    for (let i = 0; i < ids.length; i++) this.pool[this.#used++] = ids[i]!;
  }

  #compact(): void {
    const pool = new Uint32Array(headroom(this.#used - this.#dead));
    let used = 0;
    for (let ix = 0; ix < this.#start.length; ix++) {
      const n = this.#count[ix]!;
      if (n === 0) continue;
      pool.set(this.pool.subarray(this.#start[ix]!, this.#start[ix]! + n), used);
      this.#start[ix] = used;
      used += n;
    }
    this.pool = pool;
    this.#used = used;
    this.#dead = 0;
  }
}
