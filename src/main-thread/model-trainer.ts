/**
 * @module main-thread/model-trainer
 * Main-thread handle of the model trainer worker: rebuilds each environment's trained model when
 * enough changed, and on demand (POST /api/{env}/model/rebuild); a request arriving while a build
 * of that environment runs shares its outcome. Keeps per-environment stats (last build time,
 * memory, failures) for /health, seeded from the stored model so `last_build` is set whenever a
 * model serves. It never builds anything itself: the worker does, at the lowest CPU priority
 * (Linux's SCHED_IDLE at nice 19, threads/ts-worker.mjs): a build is seconds of dense algebra, and on a
 * shared core it halved event intake (issue 12: 24,903 vs 39,485 events/s with the first build
 * running during the load).
 *
 * When (issue 12, "freshness"): every CHECK_MS the handle compares the model builder's applied
 * log position with the position the serving model covers, a counter comparison with no I/O.
 * It builds when no model serves yet and new events arrived since the last attempt (so a fresh
 * start with data trains by itself), when the new events exceed `model.trained.rebuildShare` of
 * those the model covers, or when `model.trained.rebuildIntervalSec` passed with any new event.
 * Interval 0 means on demand only.
 */
import { SupervisedWorker, type WorkerEntryData } from '../threads/supervised-worker.ts';
import type { Logger } from 'pino';
import type { Config, StoreConfig } from '../config/types.ts';
import type { TrainedModelMeta } from '../store/trained-model.ts';
import type { BuildOutcome } from '../training/train-model.ts';
import type { TrainerReply, TrainerRequest, TrainerWorkerData } from '../training/trainer-worker.ts';

/** How often the schedule compares positions (or the shortest interval, if shorter): a freshness bound. */
const CHECK_MS = 5000;
/**
 * Least time between two automatic builds of an environment: under a sustained load every check
 * would find enough changed, and back-to-back builds would hold a core's idle time for nothing.
 */
const MIN_AUTOMATIC_GAP_MS = 30_000;
/** The trainer thread's niceness (Linux setpriority on the thread: 19 is the lowest priority); it also runs in the SCHED_IDLE class. */
const TRAINER_NICENESS = 19;

export type RebuildResult = BuildOutcome | { status: 'failed'; error: string };

export interface TrainerStats {
  building: boolean;
  builds: number;
  failures: number;
  /** The model in service: its last successful build, or the stored one at start (without peak RSS). */
  last?: TrainedModelMeta & { peakRssBytes?: number };
  lastError?: { at: number; error: string };
}

interface Pending {
  environment: string;
  promise: Promise<RebuildResult>;
  resolve(result: RebuildResult): void;
}

export class ModelTrainer {
  readonly #log: Logger;
  readonly #environments: Config['environments'];
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #pending = new Map<number, Pending>();
  /** Per environment, the build that starts once the running one ends (rebuild's `cover` mode). */
  readonly #next = new Map<string, Promise<RebuildResult>>();
  readonly #stats = new Map<string, TrainerStats>();
  /** Per environment: when the last automatic build started and the applied position then. */
  readonly #attempts = new Map<string, { at: number; position: number }>();
  readonly #appliedPosition: (environment: string) => number | undefined;
  #nextId = 1;
  readonly #worker: SupervisedWorker<TrainerRequest, TrainerReply>;

  /** Called when a new version is current, before the build's result is handed on. */
  readonly #onBuilt: (environment: string) => void;

  /**
   * `servingModel`: the stored model's description (seeds the stats). `appliedPosition`: the log
   * position the model builder has applied (undefined until it reports). `onBuilt`: a new version
   * of the environment's model is committed as current.
   */
  constructor(options: {
    store: StoreConfig;
    environments: Config['environments'];
    log: Logger;
    servingModel: (environment: string) => TrainedModelMeta | undefined;
    appliedPosition?: (environment: string) => number | undefined;
    onBuilt?: (environment: string) => void;
  }) {
    this.#onBuilt = options.onBuilt ?? (() => undefined);
    this.#appliedPosition = options.appliedPosition ?? (() => undefined);
    this.#log = options.log;
    this.#environments = options.environments;
    const workerData: TrainerWorkerData & WorkerEntryData = {
      entry: new URL('../training/trainer-worker.ts', import.meta.url).href,
      niceness: TRAINER_NICENESS,
      idle: true,
      store: options.store,
      environments: options.environments,
    };
    this.#worker = new SupervisedWorker<TrainerRequest, TrainerReply>({
      name: 'model trainer',
      workerData,
      log: this.#log,
      stopMessage: { type: 'stop' },
      onMessage: (reply) => this.#onReply(reply),
      // A crash (out of memory, say) fails the builds it had; the serving models stay.
      onExit: (code) => {
        for (const [id, pending] of this.#pending) this.#settle(id, pending, { status: 'failed', error: `the trainer worker exited (code ${code})` });
      },
    });
    let checkMs = Infinity;
    for (const [environment, config] of Object.entries(options.environments)) {
      if (!config.model.trained.enabled) continue;
      const meta = options.servingModel(environment);
      this.#stats.set(environment, { building: false, builds: 0, failures: 0, last: meta && { ...meta } });
      const intervalMs = config.model.trained.rebuildIntervalSec * 1000;
      if (intervalMs > 0) checkMs = Math.min(checkMs, CHECK_MS, intervalMs);
    }
    if (checkMs < Infinity) this.#timers.push(setInterval(() => this.#checkSchedule(), checkMs).unref());
  }

  /** Starts the automatic builds that are due (see the module header). */
  #checkSchedule(): void {
    const now = Date.now();
    for (const [environment, stats] of this.#stats) {
      const config = this.#environments[environment]!.model.trained;
      const position = this.#appliedPosition(environment);
      if (config.rebuildIntervalSec === 0 || stats.building || position === undefined) continue;
      const attempt = this.#attempts.get(environment);
      const gapMs = Math.min(MIN_AUTOMATIC_GAP_MS, config.rebuildIntervalSec * 1000);
      if (attempt && (now - attempt.at < gapMs || position === attempt.position)) continue;
      const covered = stats.last?.eventsPosition ?? 0;
      const fresh = position - covered;
      if (fresh <= 0) continue;
      const due =
        stats.last === undefined ||
        (config.rebuildShare > 0 && fresh >= config.rebuildShare * covered) ||
        now - stats.last.builtAt >= config.rebuildIntervalSec * 1000;
      if (!due) continue;
      this.#attempts.set(environment, { at: now, position });
      void this.rebuild(environment);
    }
  }

  #onReply(reply: TrainerReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    if (reply.type === 'failed') {
      this.#settle(reply.id, pending, { status: 'failed', error: reply.error });
      return;
    }
    const stats = this.#stats.get(pending.environment);
    // Whatever the build did with what it read: a snapshot it could not use is a fault to report.
    const problem = reply.outcome.log?.snapshotProblem;
    if (problem) this.#log.warn({ environment: pending.environment, problem }, 'training snapshot not used; the whole event log was read');
    if (stats && reply.outcome.status === 'built') {
      const m = reply.outcome.meta;
      stats.last = { ...m, peakRssBytes: reply.peakRssBytes };
      const { readFrom, eventsRead } = reply.outcome.log;
      this.#log.info({ environment: pending.environment, ...stats.last, logReadFrom: readFrom, eventsRead }, 'trained model built');
    }
    // Before the rebuild's answer: a request ranked after it is ranked by the new version.
    if (reply.outcome.status === 'built') this.#onBuilt(pending.environment);
    this.#settle(reply.id, pending, reply.outcome);
  }

  #settle(id: number, pending: Pending, result: RebuildResult): void {
    this.#pending.delete(id);
    const stats = this.#stats.get(pending.environment);
    if (stats) {
      stats.building = [...this.#pending.values()].some((p) => p.environment === pending.environment);
      stats.builds++;
      if (result.status === 'failed') {
        stats.failures++;
        stats.lastError = { at: Date.now(), error: result.error };
        this.#log.error({ environment: pending.environment, error: result.error }, 'trained model build failed; the previous model keeps serving');
      }
    }
    pending.resolve(result);
  }

  /**
   * Builds the environment's model now. `join` (the schedule) shares a build already running;
   * `cover` (POST /model/rebuild) answers with a build that read every event accepted before the
   * call: with one running, it waits for that one and builds again, the calls waiting meanwhile
   * sharing that next build. (Joining let the endpoint answer with an automatic build that had
   * started on a part of the events: over HTTP, a load followed by a rebuild served a model of
   * half the data.) Resolves with the outcome; never rejects: a failure is a `failed` result,
   * and the previous model keeps serving.
   */
  rebuild(environment: string, mode: 'join' | 'cover' = 'join'): Promise<RebuildResult> {
    const config = this.#environments[environment];
    if (!config?.model.trained.enabled) return Promise.resolve({ status: 'skipped', reason: 'the trained model is disabled for this environment' });
    for (const pending of this.#pending.values()) {
      if (pending.environment !== environment) continue;
      if (mode === 'join') return pending.promise;
      let next = this.#next.get(environment);
      if (!next) {
        next = pending.promise.then(() => {
          this.#next.delete(environment);
          return this.rebuild(environment, 'join');
        });
        this.#next.set(environment, next);
      }
      return next;
    }
    if (this.#worker.stopping) return Promise.resolve({ status: 'failed', error: 'the service is stopping' });
    const id = this.#nextId++;
    let resolve!: (result: RebuildResult) => void;
    const promise = new Promise<RebuildResult>((r) => (resolve = r));
    this.#pending.set(id, { environment, promise, resolve });
    this.#stats.get(environment)!.building = true;
    this.#worker.postMessage({ type: 'build', id, environment });
    return promise;
  }

  /** Stats per environment with the trained model enabled. */
  get stats(): ReadonlyMap<string, TrainerStats> {
    return this.#stats;
  }

  /** Stops scheduling and the worker; a build still running after `timeoutMs` is cut off (the next one cleans up after it). */
  async close(timeoutMs = 10_000): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    await this.#worker.close(timeoutMs);
  }
}
