/**
 * @module main-thread/model-builder
 * Main-thread handle of the model builder's two worker threads, each a consumer of the event log
 * with its own position: the model (histories, co-occurrence, popularity, the item layout) and
 * the report counters. Starts them (the reports thread once the model's has set up the positions
 * it inherits), restarts one that dies, keeps the model thread's latest stats for the health
 * endpoint, logs newly skipped data, and stops both (each finishing its current chunk).
 */
import { SupervisedWorker, type WorkerEntryData } from '../threads/supervised-worker.ts';
import type { Logger } from 'pino';
import type { Config, StoreConfig } from '../config/types.ts';
import type { BuilderProblem, BuilderRows, BuilderStarted, BuilderStats, BuilderWorkerData } from '../builder/builder-worker.ts';
import type { RequestCounts } from '../domain/request-counts.ts';
import { createLiveRows, type LiveRowsMemory } from '../store/live-rows.ts';
import { DEFAULT_CONFIG } from '../config/defaults.ts';

/** How often the report counters' thread writes (the model's thread: every 100 ms). */
const REPORTS_FLUSH_MS = 1000;
/** Request-count posts (about one a second) held for the report counters' thread before it starts. */
const MAX_HELD_COUNTS = 600;

type ThreadData = BuilderWorkerData & WorkerEntryData;
type BuilderMessage = BuilderStats | BuilderRows | BuilderStarted | BuilderProblem;
/** What a builder thread is sent: request counts (the report counters' thread), or its stop. */
type BuilderCommand = 'stop' | RequestCounts;
type BuilderThread = SupervisedWorker<BuilderCommand, BuilderMessage>;

/** One of the builder's threads, supervised (threads/supervised-worker.ts); a stored snapshot it could not use is logged here. */
function builderThread(data: ThreadData, log: Logger, onMessage: (message: BuilderStats | BuilderRows | BuilderStarted) => void): BuilderThread {
  const threadLog = log.child({ thread: data.role === 'reports' ? 'reports' : 'model' });
  return new SupervisedWorker<BuilderCommand, BuilderMessage>({
    name: 'model builder',
    workerData: data,
    log: threadLog,
    // Its last commit holds its position: a new thread resumes there without double counting.
    stopMessage: 'stop',
    onMessage: (message) => {
      if (message.type === 'problem') threadLog.warn({ environment: message.environment, problem: message.problem }, 'stored snapshot not used: replaying the event log instead');
      else onMessage(message);
    },
  });
}

export class ModelBuilder {
  readonly #log: Logger;
  readonly #model: BuilderThread;
  #reports: BuilderThread | undefined;
  readonly #heldCounts: RequestCounts[] = [];
  /** Resolved when the model thread has started (the report counters' thread may then start). */
  readonly #modelStarted: Promise<void>;
  #onModelStarted!: () => void;
  #stats: BuilderStats | undefined;
  #reportsStats: BuilderStats | undefined;
  /** Where the model thread publishes neighbour rows between its flushes, per environment: for the ranking workers. */
  readonly liveRows: Record<string, LiveRowsMemory>;

  readonly #onRows: (rows: BuilderRows) => void;

  /**
   * `onRows`: the neighbour rows each flush rewrote (committed), for the ranking workers.
   * `pacing`: other flush paces than the service's (tests of the pacing itself).
   */
  constructor(options: {
    store: StoreConfig;
    environments: Config['environments'];
    niceness?: number;
    /** How often applied events are written under a steady arrival (config builder.flushMs). */
    flushMs?: number;
    log: Logger;
    onRows?: (rows: BuilderRows) => void;
    pacing?: Partial<Pick<BuilderWorkerData, 'layoutFlushMs' | 'layoutFlushItems'>>;
  }) {
    this.#log = options.log;
    this.#onRows = options.onRows ?? (() => undefined);
    this.#modelStarted = new Promise((resolve) => (this.#onModelStarted = resolve));
    const niceness = options.niceness ?? 0;
    // Made here, not in the thread: a restarted thread keeps its rows where the workers read them.
    this.liveRows = createLiveRows(Object.keys(options.environments));
    const data: ThreadData = {
      role: 'model',
      indexedUpTo: new SharedArrayBuffer(8 * Object.keys(options.environments).length),
      entry: new URL('../builder/builder-worker.ts', import.meta.url).href,
      store: options.store,
      environments: options.environments,
      pollMs: 5000,
      chunkSize: 5000,
      // Against the 100 ms of flushMs a step's wait adds little lag; a step costs an item-index
      // commit and reads of the log's ends however few events it has.
      minStepMs: 20,
      // Everything applied is written to LMDB (with the positions) once a second under a steady
      // arrival, publishMs after the last event when arrivals pause; the rows ranking reads are
      // told which rows changed every publishMs in between, and read them in shared memory (store/live-rows.ts). Written every 100 ms, the
      // flushes took ~14 ms of CPU each at ~9,400 events/s (most in LMDB's puts and commit, a hot
      // row rewritten ten times a second); once a second, ~29 ms each: the process's CPU under
      // that load went from 10.1 to 6.9 s over 15 s (scratch harness, before the row board, now live rows).
      flushMs: options.flushMs ?? DEFAULT_CONFIG.builder.flushMs,
      publishMs: 100,
      liveRows: this.liveRows,
      // The ceiling of the cost-paced catch-up flushes: at 1,000,000 events a flush takes ~3 s, and
      // ten times that is the pace. A 1M-event replay, alternating with the fixed 8 s pace before:
      // 23.8 and 29.8 s before, 22.2 and 28.7 s paced (this VM's noise is larger than the gain).
      catchUpFlushMs: 30_000,
      layoutFlushMs: 500,
      // Each changed item holds a vector and an item view entry until its flush: after a
      // 1,000,000-row file drop the builder's catch-up took the service's RssAnon to 810-1,000 MB
      // at 50,000 (six runs), 680-700 MB at 10,000 (three), with the same builder CPU (~10 s).
      layoutFlushItems: 10_000,
      // What /health shows of positions and lag is at most this old (a post costs ~1 ms: prom-client JSON).
      statsIntervalMs: 250,
      // Applied by threads/ts-worker.mjs to this thread alone (config builder.niceness; absent, as in a
      // standalone replay or the eval, the process's priority).
      niceness,
      ...options.pacing,
    };
    this.#model = builderThread(data, this.#log, (message) => {
      if (message.type === 'rows') this.#onRows(message);
      else if (message.type === 'stats') this.#onStats(message);
      else this.#onModelStarted();
      // The model thread set the positions the reports inherit: the reports thread may start
      // (once); during a stop only to write the request counts held for it (close()).
      if (message.type === 'started' && !this.#reports && (!this.#model.stopping || this.#heldCounts.length > 0)) {
        // Reports are sums read hours later: at the lowest niceness, 19, whenever the model's is
        // lowered (the process's own priority when it is kept). On one core at 15 they took a
        // quarter of it from the model's catch-up: the events bench (3 × 10 s) at 15 then 19, model
        // lag p99 18.6 → 16.2 s, catch-up 15.6 → 12.3 s, the reports 1.9 → 4.0 s after the model.
        const reportsNiceness = niceness > 0 ? 19 : niceness;
        // Written every second, not every 100 ms: a report is read in hours and days, and each
        // write rewrites the day's and the hour's rollups whole; at a steady ~9,000 events/s the
        // reports thread spent 7 µs an event, most of it in its 10 commits a second.
        this.#reports = builderThread({ ...data, role: 'reports', niceness: reportsNiceness, flushMs: REPORTS_FLUSH_MS, liveRows: undefined }, this.#log, (m) => {
          if (m.type === 'stats') this.#reportsStats = m;
        });
        for (const counts of this.#heldCounts.splice(0)) this.postRequestCounts(counts);
      }
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
   * The recommendation requests' report counters, for the report counters' thread's next write
   * (held here until it has started). Posted to a thread that has died (before its restart) they
   * are lost: reporting, not billing.
   */
  postRequestCounts(counts: RequestCounts): void {
    if (!this.#reports) {
      if (this.#heldCounts.length < MAX_HELD_COUNTS) this.#heldCounts.push(counts);
      return;
    }
    const transfer = counts.items.flatMap((i) => [i.ix.buffer as ArrayBuffer, i.counts.buffer as ArrayBuffer]);
    this.#reports.postMessage(counts, transfer);
  }

  /** Whether the worker threads run (for /ready): the reports thread once started. */
  get running(): boolean {
    return this.#model.running && (this.#reports?.running ?? true);
  }

  /** The model thread's latest stats (undefined until the first report, within a second of start). */
  get stats(): BuilderStats | undefined {
    return this.#stats;
  }

  /** The reports thread's latest stats (its positions: how far the report counters are written). */
  get reportsStats(): BuilderStats | undefined {
    return this.#reportsStats;
  }

  /**
   * Asks the threads to write what they applied and exit; resolves when they have, or after
   * `timeoutMs` terminates them (their last writes hold their positions, so nothing is lost).
   */
  async close(timeoutMs = 10_000): Promise<void> {
    const model = this.#model.close(timeoutMs);
    // A stop before the model thread has started (a SIGTERM in the service's first second, on a
    // busy machine) must still write the request counts held for the report counters: their
    // thread starts once the model's has, and stops at once after its final write.
    if (!this.#reports && this.#heldCounts.length > 0) await Promise.race([this.#modelStarted, model]);
    await Promise.all([model, this.#reports?.close(timeoutMs)]);
  }
}
