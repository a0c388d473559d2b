/**
 * @module main-thread/ranking-pool
 * The main thread's side of ranking: a Piscina pool of ranking workers and the batcher in front
 * of it. Requests wait here while every worker is busy and then travel to a worker as one task
 * (up to maxBatch), so under load one thread hop serves many requests. A request gets 503
 * (Retry-After) when maxQueue requests already wait or its deadline passes first; it never hangs.
 */
import { Piscina } from 'piscina';
import { memoizeWorkerInterfaces, replaceTaskMaps } from '../serving/worker-interfaces.ts';
import type { Config } from '../config/types.ts';
import { E } from '../domain/errors.ts';
import { onStoreChange } from '../store/change-signal.ts';
import { NoticeJournal, type Notice } from '../serving/notices.ts';
import { ENGINE_BUILT, unpackReply, type BatchOutcome, type BatchReply, type WireRankTask, type WireTaskOrCheck } from '../serving/messages.ts';
import type { CheckOutcome, CheckTask, RankOutcome } from '../serving/task.ts';
import type { RankBatch, RankWorkerData } from '../serving/ranking-worker.ts';
import type { LiveRowsMemory } from '../store/live-rows.ts';

const WORKER_ENTRY = new URL('../serving/ranking-worker-entry.mjs', import.meta.url).pathname;
const RETRY_AFTER_SEC = 1;
/**
 * An idle pool sends its workers empty batches this often: each batch syncs the worker with the
 * catalog change feed, so a bulk load between requests is not left for one request to replay.
 * (Workers block between tasks, Piscina's fastest mode, so they cannot keep a timer themselves.)
 * Only after a commit was signalled (store/change-signal) or a notice arrived: with nothing new
 * the batches cost CPU for nothing, five times a second (issue 12, "idle costs nothing").
 */
const IDLE_SYNC_MS = 200;
/**
 * How long a stop waits for workers still starting (building their engine: ~5 s at 1,000,000
 * items) and batches still running; within main.ts's bound on the whole stop (drain + 15 s).
 */
const CLOSE_WAIT_MS = 10_000;
const CLOSE_POLL_MS = 10;

interface Pending {
  task: WireTaskOrCheck;
  /** Epoch ms after which the request is answered 503. */
  deadlineAt: number;
  resolve(outcome: RankOutcome | CheckOutcome): void;
  reject(err: unknown): void;
}

export class RankingPool {
  readonly #piscina: Piscina;
  readonly #workers: number;
  readonly #maxBatch: number;
  readonly #maxWaiting: number;
  readonly #deadlineMs: number;
  #pending: Pending[] = [];
  #inFlight = 0;
  #scheduled = false;
  #expiryTimer: NodeJS.Timeout | undefined;
  readonly #idleSync: NodeJS.Timeout;
  readonly #stopListening: () => void;
  /** Something changed since the last idle sync (a commit was signalled, a notice arrived). */
  #changed = true;
  readonly #journal: NoticeJournal;
  readonly #ready: Promise<void>;
  #engineBuilt = false;
  /** Batches given to Piscina and not yet answered, idle syncs and the start's included. */
  #running = 0;
  /** threadIds of the workers whose engine is built (ENGINE_BUILT). */
  readonly #built = new Set<number>();

  /** `onWorkerError`: a worker that failed after the start (Piscina starts another in its place). */
  constructor(config: Pick<Config, 'store' | 'environments' | 'recommend'>, onWorkerError: (err: unknown) => void, liveRows?: Record<string, LiveRowsMemory>) {
    const workerData: RankWorkerData = { store: config.store, environments: config.environments, liveRows };
    this.#workers = config.recommend.workers;
    this.#journal = new NoticeJournal(this.#workers);
    // Before the first worker and task: otherwise every task leaves garbage in the main thread's old space.
    memoizeWorkerInterfaces();
    replaceTaskMaps();
    this.#piscina = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: this.#workers,
      maxThreads: this.#workers,
      idleTimeout: Infinity,
      // Nothing reads Piscina's run and wait time histograms; recording them cost every task.
      recordTiming: false,
      // Between tasks the worker waits with Atomics.waitAsync, so its event loop turns. With
      // Piscina's default ('sync', Atomics.wait) it never did: the timer lmdb-js sets on every
      // read snapshot it renews (two a batch, worker.ts resets them) never fired and stayed in
      // the timer list, ~150 bytes a request that no collection could free (30 MB live after 18 s
      // at ~11,000 requests/s), and the growing heap gave the worker its longest GC pauses.
      atomics: 'async',
      workerData,
    });
    this.#piscina.on('workerDestroy', (worker: { id: number }) => {
      this.#journal.forget(worker.id);
      this.#built.delete(worker.id);
    });
    this.#piscina.on('message', (message: unknown) => {
      const threadId = (message as Record<string, unknown> | null)?.[ENGINE_BUILT];
      if (typeof threadId === 'number') this.#built.add(threadId);
    });
    this.#maxBatch = config.recommend.maxBatch;
    this.#maxWaiting = config.recommend.maxQueue;
    this.#deadlineMs = config.recommend.deadlineMs;
    this.#stopListening = onStoreChange(() => (this.#changed = true));
    this.#idleSync = setInterval(() => {
      if (!this.#changed || this.#inFlight > 0 || this.#pending.length > 0) return;
      this.#changed = false;
      for (let w = 0; w < this.#workers; w++) this.#run({ deadlineAt: Infinity, tasks: [] }).catch(() => undefined);
    }, IDLE_SYNC_MS).unref();
    // An empty batch per worker, answered once its engine exists. A worker failing with no task on
    // it is Piscina's 'error' event: unheard, it ended the process as an uncaught exception,
    // skipping the graceful stop. Before the engines are built it means one cannot be (Piscina
    // starts no other in its place), so the start fails.
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#piscina.on('error', (err: unknown) => (this.#engineBuilt ? onWorkerError(err) : reject(err)));
      Promise.all(Array.from({ length: this.#workers }, () => this.#run({ deadlineAt: Infinity, tasks: [] }))).then(() => {
        this.#engineBuilt = true;
        resolve();
      }, reject);
    });
    // The caller handles a failed start once it listens; until then it must not be unhandled.
    this.#ready.catch(() => undefined);
  }

  /**
   * A change the ranking workers must learn of (notices.ts); it travels with the next batch each
   * worker runs, so a request dispatched after this call is ranked with it.
   */
  notify(notice: Notice): void {
    this.#changed = true;
    this.#journal.append(notice);
  }

  /**
   * Runs a batch with the notices not every worker has yet; records the worker's position. A
   * promise chain, not an async function, and the batch's object written out, not spread: as
   * `async` with `{ ...batch, notices }` this was ~0.9 MB/s of the main thread's old-generation
   * growth at 4 connections (100,000 items, heap spaces sampled every 250 ms: ~2.0 against ~1.1
   * MB/s), what a heap profile of the objects that major GCs collected showed 16% of #run's
   * allocations to become against 1.9% of everything the thread allocated.
   */
  #run(batch: Omit<RankBatch, 'notices'>): Promise<BatchOutcome[]> {
    this.#running++;
    const task: RankBatch = { deadlineAt: batch.deadlineAt, tasks: batch.tasks, notices: this.#journal.pending() };
    return (this.#piscina.run(task) as Promise<BatchReply>).then(
      (reply) => {
        this.#running--;
        this.#journal.acknowledge(reply.threadId, reply.seq);
        return unpackReply(reply);
      },
      (err: unknown) => {
        this.#running--;
        throw err;
      },
    );
  }

  /**
   * Resolves once every worker has built its engine (at 1,000,000 items ~5 s); rejects if one
   * cannot be. Requests meanwhile wait for their deadline as usual.
   */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Whether every worker has built its engine (for /ready). */
  get engineBuilt(): boolean {
    return this.#engineBuilt;
  }

  /** Requests waiting for a worker (for /metrics). */
  get queueDepth(): number {
    return this.#pending.length;
  }

  /** Ranking worker threads alive (for /ready). */
  get threads(): number {
    return this.#piscina.threads.length;
  }

  /** Ranks one request (messages.ts encodeRankTask); rejects with E.unavailable (503) on a full queue or a missed deadline. */
  rank(task: WireRankTask): Promise<RankOutcome> {
    return this.#enqueue(task) as Promise<RankOutcome>;
  }

  /** Which items of a cached list may still be shown (CheckTask); rejects as rank() does. */
  check(task: CheckTask): Promise<CheckOutcome> {
    return this.#enqueue(task) as Promise<CheckOutcome>;
  }

  #enqueue(task: WireTaskOrCheck): Promise<RankOutcome | CheckOutcome> {
    if (this.#pending.length >= this.#maxWaiting) {
      return Promise.reject(E.unavailable('The recommendation queue is full; retry shortly', RETRY_AFTER_SEC));
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ task, deadlineAt: Date.now() + this.#deadlineMs, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // Requests of the same event-loop turn go together.
        setImmediate(() => this.#flush());
      }
    });
  }

  /**
   * Sends waiting requests while a worker is free: at most one batch per worker in flight, so
   * under load the requests that arrive meanwhile form the next, larger batch (fewer hops), and
   * at low load a request waits for no one. Requests past their deadline are answered 503.
   */
  #flush(): void {
    this.#scheduled = false;
    const now = Date.now();
    if (this.#pending.length > 0 && this.#pending[0]!.deadlineAt <= now) {
      const busy = this.#busy();
      const expired = this.#pending.filter((p) => p.deadlineAt <= now);
      this.#pending = this.#pending.filter((p) => p.deadlineAt > now);
      for (const p of expired) p.reject(busy);
    }
    while (this.#inFlight < this.#workers && this.#pending.length > 0) this.#send(this.#pending.splice(0, this.#maxBatch));
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    // Every worker busy (or stuck): the oldest waiting request still gets its 503 on time.
    if (this.#pending.length > 0) this.#expiryTimer = setTimeout(() => this.#flush(), Math.max(0, this.#pending[0]!.deadlineAt - now));
  }

  /**
   * The deadline is kept here, not by aborting the task: Piscina aborts a running task by
   * terminating its worker, which would then rebuild its engine. A late batch's answers are
   * dropped, and a batch still queued at its deadline is skipped by the worker.
   */
  #send(batch: Pending[]): void {
    this.#inFlight++;
    let settled = false;
    const deadlineAt = batch[0]!.deadlineAt;
    const timer = setTimeout(() => {
      settled = true;
      const busy = this.#busy();
      for (const p of batch) p.reject(busy);
    }, Math.max(0, deadlineAt - Date.now()));
    this.#run({ deadlineAt, tasks: batch.map((p) => p.task) }).then(
      (outcomes) => {
        this.#done(timer);
        if (settled) return;
        batch.forEach((p, i) => {
          const outcome = outcomes[i]!;
          if ('failed' in outcome) p.reject(E.internal(new Error(outcome.failed)));
          else if ('expired' in outcome) p.reject(this.#busy());
          else p.resolve(outcome);
        });
      },
      (err: unknown) => {
        this.#done(timer);
        if (!settled) for (const p of batch) p.reject(E.internal(err));
      },
    );
  }

  #busy() {
    if (!this.#engineBuilt) return E.unavailable('The ranking workers are still loading the catalog after a start; retry shortly', RETRY_AFTER_SEC);
    return E.unavailable(`No answer within ${this.#deadlineMs} ms: the recommendation engine is busy; retry shortly`, RETRY_AFTER_SEC);
  }

  #done(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.#inFlight--;
    if (this.#pending.length > 0 && !this.#scheduled) this.#flush();
  }

  /**
   * Stops the workers once none is starting and no batch runs. Piscina stops a worker with
   * worker.terminate(); one stopped inside an lmdb-js call that throws (opening its environment,
   * as a worker started in place of a failed one does) aborts the whole process (napi_throw on a
   * terminating thread), and the graceful stop with it. Waiting in Atomics between tasks, a
   * worker stops cleanly.
   */
  async close(): Promise<void> {
    clearInterval(this.#idleSync);
    this.#stopListening();
    clearTimeout(this.#expiryTimer);
    const giveUpAt = Date.now() + CLOSE_WAIT_MS;
    // Batches still queued in Piscina (no worker to run them: all failed) do not hold the stop.
    const onWorker = () => this.#running > this.#piscina.queueSize;
    const starting = () => this.#piscina.threads.some((worker) => !this.#built.has(worker.threadId));
    while (Date.now() < giveUpAt && (onWorker() || starting())) {
      await new Promise((resolve) => setTimeout(resolve, CLOSE_POLL_MS));
    }
    await this.#piscina.destroy();
  }
}
