/**
 * @module recommend/request-counter
 * The `requests` reporting counter (issue: requests, impressions and clicks per list_name,
 * user_group, channel and day): recommendation requests are not events, so the route counts
 * them here, on the main thread in memory, and every FLUSH_MS one asynchronous LMDB transaction
 * adds the counts to the stored ones under the same keys as the model builder's other counters
 * (model/reports.ts reportKey), where GET /reports finds them. Only this module writes the
 * `requests` metric, so its read-modify-write never races the builder's. A crash loses at most
 * FLUSH_MS of counts (reporting, not billing).
 */
import { dayOf, reportKey } from '../model/reports.ts';
import type { Store } from '../store/open.ts';

const FLUSH_MS = 1000;
const SEP = '\u0000';

export class RequestCounter {
  readonly #store: Store;
  #counts = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();

  constructor(store: Store) {
    this.#store = store;
    this.#timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
  }

  /** One request: +1 for each of its lists' names, and +1 for its user group and its channel. */
  count(environment: string, nowMs: number, listNames: readonly string[], userGroup: string, channel: string): void {
    const day = dayOf(nowMs);
    const add = (dimension: string, value: string) => {
      const id = `${environment}${SEP}${day}${SEP}${dimension}${SEP}${value}`;
      this.#counts.set(id, (this.#counts.get(id) ?? 0) + 1);
    };
    for (const name of listNames) add('list_name', name);
    add('user_group', userGroup);
    add('channel', channel);
  }

  /** Adds what was counted to LMDB; resolves once committed. */
  flush(): Promise<void> {
    if (this.#counts.size === 0) return this.#flushing;
    const counts = this.#counts;
    this.#counts = new Map();
    const store = this.#store;
    // Chained: a flush never starts before the previous one committed, so no count is added twice over.
    this.#flushing = this.#flushing.then(() =>
      store.root.transaction(() => {
        for (const [id, n] of counts) {
          const [environment = '', day = '', dimension = '', value = ''] = id.split(SEP);
          const key = reportKey(environment, day, dimension, value, 'requests');
          store.modelState.put(key, ((store.modelState.get(key) as number | undefined) ?? 0) + n);
        }
      }),
    ).then(() => undefined);
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
