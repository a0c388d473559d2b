/**
 * @module recommend/pool
 * The main thread's side of ranking: a Piscina pool of ranking workers and the batcher in front
 * of it. Requests that arrive in the same turn of the event loop travel to a worker as one task
 * (up to maxBatch), so under load one thread hop serves many requests. A request gets 503
 * (Retry-After) when the queue is full or its deadline passes first; it never hangs.
 */
import { Piscina } from 'piscina';
import type { Config } from '../config/types.ts';
import { E } from '../errors.ts';
import type { RankOutcome, RankTask } from './task.ts';
import type { BatchOutcome, RankBatch, RankWorkerData } from './worker.ts';

const WORKER_ENTRY = new URL('./worker-entry.mjs', import.meta.url).pathname;
const RETRY_AFTER_SEC = 1;

interface Pending {
  task: RankTask;
  resolve(outcome: RankOutcome): void;
  reject(err: unknown): void;
}

export class RankingPool {
  readonly #piscina: Piscina;
  readonly #maxBatch: number;
  readonly #deadlineMs: number;
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(config: Pick<Config, 'store' | 'environments' | 'recommend'>) {
    const workerData: RankWorkerData = { store: config.store, environments: config.environments };
    this.#piscina = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: config.recommend.workers,
      maxThreads: config.recommend.workers,
      maxQueue: config.recommend.maxQueue,
      idleTimeout: Infinity,
      workerData,
    });
    this.#maxBatch = config.recommend.maxBatch;
    this.#deadlineMs = config.recommend.deadlineMs;
  }

  /** Resolves once every worker has built its engine, so the first request does not wait for it. */
  async ready(): Promise<void> {
    const empty: RankBatch = { deadlineAt: Infinity, tasks: [] };
    await Promise.all(Array.from({ length: this.#piscina.options.minThreads }, () => this.#piscina.run(empty)));
  }

  /** Ranks one request; rejects with E.unavailable (503) on a full queue or a missed deadline. */
  rank(task: RankTask): Promise<RankOutcome> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ task, resolve, reject });
      if (this.#pending.length >= this.#maxBatch) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#pending.length > 0) this.#send(this.#pending.splice(0, this.#maxBatch));
  }

  /**
   * The deadline is kept here, not by aborting the task: Piscina aborts a running task by
   * terminating its worker, which would then rebuild its engine. A late batch's answers are
   * dropped, and a batch still queued at its deadline is skipped by the worker.
   */
  #send(batch: Pending[]): void {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      const busy = E.unavailable(`No answer within ${this.#deadlineMs} ms: the recommendation engine is busy; retry shortly`, RETRY_AFTER_SEC);
      for (const p of batch) p.reject(busy);
    }, this.#deadlineMs);
    const request: RankBatch = { deadlineAt: Date.now() + this.#deadlineMs, tasks: batch.map((p) => p.task) };
    this.#piscina.run(request).then(
      (outcomes: BatchOutcome[]) => {
        clearTimeout(timer);
        if (settled) return;
        batch.forEach((p, i) => {
          const outcome = outcomes[i]!;
          if ('failed' in outcome) p.reject(E.internal(new Error(outcome.failed)));
          else p.resolve(outcome);
        });
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        const full = err instanceof Error && /queue is at limit/i.test(err.message);
        const failure = full ? E.unavailable('The recommendation queue is full; retry shortly', RETRY_AFTER_SEC) : E.internal(err);
        for (const p of batch) p.reject(failure);
      },
    );
  }

  async close(): Promise<void> {
    await this.#piscina.destroy();
  }
}
