/**
 * @module model/builder
 * Main-thread handle of the model builder worker: starts it, keeps its latest stats for the
 * health endpoint, logs newly skipped data, and stops it (finishing the current chunk).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config, StoreConfig } from '../config/types.ts';
import type { BuilderRows, BuilderStats, BuilderWorkerData } from './builder-worker.ts';
import type { RequestCounts } from '../domain/request-counts.ts';

/** Pause before restarting a crashed worker, so a persistent fault does not spin. */
const RESTART_DELAY_MS = 1000;

export class ModelBuilder {
  readonly #workerData: BuilderWorkerData & { entry: string; niceness: number };
  readonly #log: Logger;
  #worker!: Worker;
  #exited!: Promise<void>;
  #stopping = false;
  /** The worker thread is running (false between an unexpected exit and its restart). */
  #running = false;
  #stats: BuilderStats | undefined;

  readonly #onRows: (rows: BuilderRows) => void;

  /**
   * `onRows`: the neighbour rows each flush rewrote (committed), for the ranking workers.
   * `pacing`: other flush paces than the service's (tests of the pacing itself).
   */
  constructor(options: {
    store: StoreConfig;
    environments: Config['environments'];
    niceness?: number;
    log: Logger;
    onRows?: (rows: BuilderRows) => void;
    pacing?: Partial<Pick<BuilderWorkerData, 'layoutFlushMs' | 'layoutFlushItems'>>;
  }) {
    this.#log = options.log;
    this.#onRows = options.onRows ?? (() => undefined);
    this.#workerData = {
      entry: new URL('./builder-worker.ts', import.meta.url).href,
      store: options.store,
      environments: options.environments,
      pollMs: 5000,
      chunkSize: 5000,
      flushMs: 100,
      // The ceiling of the cost-paced catch-up flushes: at 1,000,000 events a flush takes ~3 s, and
      // ten times that is the pace. A 1M-event replay, alternating with the fixed 8 s pace before:
      // 23.8 and 29.8 s before, 22.2 and 28.7 s paced (this VM's noise is larger than the gain).
      catchUpFlushMs: 30_000,
      layoutFlushMs: 500,
      // Each changed item holds a vector and an item view entry until its flush: after a
      // 1,000,000-row file drop the builder's catch-up took the service's RssAnon to 810-1,000 MB
      // at 50,000 (six runs), 680-700 MB at 10,000 (three), with the same builder CPU (~10 s).
      layoutFlushItems: 10_000,
      statsIntervalMs: 1000,
      // Applied by ts-worker.mjs to this thread alone (config builder.niceness; absent, as in a
      // standalone replay or the eval, the process's priority).
      niceness: options.niceness ?? 0,
      ...options.pacing,
    };
    this.#start();
  }

  #start(): void {
    const worker = new Worker(new URL('../ts-worker.mjs', import.meta.url), { workerData: this.#workerData });
    this.#worker = worker;
    this.#running = true;
    worker.on('message', (message: BuilderStats | BuilderRows) => (message.type === 'rows' ? this.#onRows(message) : this.#onStats(message)));
    worker.on('error', (err) => this.#log.error({ err }, 'model builder failed'));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.#running = false;
        resolve();
        if (this.#stopping) return;
        // Its last commit holds its position: a new worker resumes there without double counting.
        this.#log.error({ code, restartInMs: RESTART_DELAY_MS }, 'model builder stopped unexpectedly');
        setTimeout(() => this.#stopping || this.#start(), RESTART_DELAY_MS).unref();
      });
    });
  }

  #onStats(stats: BuilderStats): void {
    const before = this.#stats?.skipped ?? {};
    for (const [reason, n] of Object.entries(stats.skipped)) {
      if (n !== before[reason]) this.#log.info({ reason, total: n }, 'model builder skipped events');
    }
    this.#stats = stats;
  }

  /**
   * The recommendation requests' report counters, for the worker's next write. Posted to a worker
   * that has died (before its restart) they are lost: reporting, not billing.
   */
  postRequestCounts(counts: RequestCounts): void {
    const transfer = counts.items.flatMap((i) => [i.ix.buffer as ArrayBuffer, i.counts.buffer as ArrayBuffer]);
    this.#worker.postMessage(counts, transfer);
  }

  /** Whether the worker thread runs (for /ready). */
  get running(): boolean {
    return this.#running;
  }

  /** Latest stats (undefined until the first report, within a second of start). */
  get stats(): BuilderStats | undefined {
    return this.#stats;
  }

  /**
   * Asks the worker to write what it applied and exit; resolves when it has, or after
   * `timeoutMs` terminates it (its last write holds its position, so nothing is lost).
   */
  async close(timeoutMs = 10_000): Promise<void> {
    this.#stopping = true;
    this.#worker.postMessage('stop');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    if (await Promise.race([this.#exited.then(() => false), timedOut])) {
      this.#log.warn({ timeoutMs }, 'model builder did not stop in time: terminated');
      await this.#worker.terminate();
    }
    clearTimeout(timer);
  }
}
