/**
 * @module serving/signals
 * Popularity signals of one environment as a ranking worker holds them: the all-time
 * popularity prior (resident in the kernel) and the `popular` and `trending` lists that those
 * strategies rank from, as the model builder keeps them (builder/popularity.ts). Reloaded when
 * the builder has written new events, at most once per REFRESH_MS, so a request pays for a
 * reload rarely and never for a stale-check it can skip. The lists are small records; only the
 * prior is catalog-sized (one copy into the kernel per reload).
 */
import type { Key } from 'lmdb';
import { decodeTopItems, eventsPositionKey, readPopularity, topItemsKey } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import type { CatalogView } from './catalog-view.ts';
import type { TopList } from '../strategies/candidate-input.ts';

const REFRESH_MS = 1000;
/** The lists change without events once an hour (trending's decay): looked at this often even then. */
const LISTS_REFRESH_MS = 60_000;

const EMPTY: TopList = { ix: new Uint32Array(0), weight: new Float32Array(0) };

export class Signals {
  readonly #store: Store;
  readonly #view: CatalogView;
  popular: TopList = EMPTY;
  trending: TopList = EMPTY;
  #position = -1;
  #checkedAt = 0;
  #listsReadAt = 0;
  /**
   * Reused for every read of the all-time counts: copies of the stored arrays were ~100 MB
   * allocated a second on this serving thread at 1,000,000 items while events arrive, and fed
   * its garbage collector.
   */
  #counts: Float32Array = new Float32Array(0);

  constructor(store: Store, view: CatalogView) {
    this.#store = store;
    this.#view = view;
  }

  /** Reloads when the builder moved on (or LISTS_REFRESH_MS passed) and REFRESH_MS has passed. */
  refresh(nowMs: number, force = false): void {
    if (!force && nowMs - this.#checkedAt < REFRESH_MS) return;
    this.#checkedAt = nowMs;
    const environment = this.#view.environment;
    const position = (this.#store.modelState.get(eventsPositionKey(environment)) as number | undefined) ?? 0;
    const moved = force || position !== this.#position;
    if (moved) {
      this.#position = position;
      this.#view.setPopularity(this.#readAll());
    }
    if (moved || nowMs - this.#listsReadAt >= LISTS_REFRESH_MS) {
      this.#listsReadAt = nowMs;
      this.popular = this.#list(topItemsKey(environment, 'popular'));
      this.trending = this.#list(topItemsKey(environment, 'trending'));
    }
  }

  /** The all-time counts, in the reused #counts: valid until the next #readAll. */
  #readAll(): Float32Array {
    const counts = readPopularity(this.#store.model, this.#view.environment, 'all', this.#counts);
    if (counts.buffer !== this.#counts.buffer) this.#counts = counts;
    return counts;
  }

  /** A stored list without the indices this view does not hold yet (the catalog change is on its way). */
  #list(key: Key): TopList {
    const list = decodeTopItems(this.#store.model.getBinaryFast(key));
    const capacity = this.#view.capacity;
    let n = 0;
    for (let i = 0; i < list.ix.length; i++) {
      if (list.ix[i]! >= capacity) continue;
      list.ix[n] = list.ix[i]!;
      list.weight[n++] = list.weight[i]!;
    }
    return n === list.ix.length ? list : { ix: list.ix.subarray(0, n), weight: list.weight.subarray(0, n) };
  }
}
