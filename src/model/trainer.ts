/**
 * @module model/trainer
 * Main-thread handle of the model trainer worker: rebuilds each environment's trained model on
 * its schedule (model.trained.rebuildIntervalSec, and once soon after start when none serves
 * yet; an interval of 0 means on demand only), and on demand (POST /api/{env}/model/rebuild); a request arriving while a build of that
 * environment runs shares its outcome. Keeps per-environment stats (last build time, memory,
 * failures) for /health. It never builds anything itself: the worker does.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config, StoreConfig } from '../config/types.ts';
import type { BuildOutcome } from './train-model.ts';
import type { TrainerReply, TrainerRequest, TrainerWorkerData } from './trainer-worker.ts';

/** Pause before restarting a crashed worker, so a persistent fault does not spin. */
const RESTART_DELAY_MS = 1000;
/** First build when no model serves: after the model builder has had time to index recent events. */
const FIRST_BUILD_DELAY_MS = 5000;

export type RebuildResult = BuildOutcome | { status: 'failed'; error: string };

export interface TrainerStats {
  building: boolean;
  builds: number;
  failures: number;
  /** The last successful build (undefined before the first). */
  last?: { version: number; items: number; users: number; interactions: number; builtAt: number; buildMs: number; memoryBytes: number; peakRssBytes: number };
  lastError?: { at: number; error: string };
}

interface Pending {
  environment: string;
  promise: Promise<RebuildResult>;
  resolve(result: RebuildResult): void;
}

export class ModelTrainer {
  readonly #workerData: TrainerWorkerData & { entry: string };
  readonly #log: Logger;
  readonly #environments: Config['environments'];
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #pending = new Map<number, Pending>();
  readonly #stats = new Map<string, TrainerStats>();
  #nextId = 1;
  #worker!: Worker;
  #exited!: Promise<void>;
  #stopping = false;

  /** Called when a new version is current, before the build's result is handed on. */
  readonly #onBuilt: (environment: string) => void;

  /** `onBuilt`: a new version of the environment's model is committed as current. */
  constructor(options: {
    store: StoreConfig;
    environments: Config['environments'];
    log: Logger;
    hasModel: (environment: string) => boolean;
    onBuilt?: (environment: string) => void;
  }) {
    this.#onBuilt = options.onBuilt ?? (() => undefined);
    this.#log = options.log;
    this.#environments = options.environments;
    this.#workerData = { entry: new URL('./trainer-worker.ts', import.meta.url).href, store: options.store, environments: options.environments };
    this.#start();
    for (const [environment, config] of Object.entries(options.environments)) {
      if (!config.model.trained.enabled) continue;
      this.#stats.set(environment, { building: false, builds: 0, failures: 0 });
      // Interval 0: on demand only (no first build either).
      if (config.model.trained.rebuildIntervalSec === 0) continue;
      const scheduled = () => void this.rebuild(environment);
      this.#timers.push(setInterval(scheduled, config.model.trained.rebuildIntervalSec * 1000).unref());
      if (!options.hasModel(environment)) this.#timers.push(setTimeout(scheduled, FIRST_BUILD_DELAY_MS).unref());
    }
  }

  #start(): void {
    const worker = new Worker(new URL('../ts-worker.mjs', import.meta.url), { workerData: this.#workerData });
    this.#worker = worker;
    worker.on('message', (reply: TrainerReply) => this.#onReply(reply));
    worker.on('error', (err) => this.#log.error({ err }, 'model trainer failed'));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        resolve();
        // A crash (out of memory, say) fails the builds it had; the serving models stay.
        for (const [id, pending] of this.#pending) this.#settle(id, pending, { status: 'failed', error: `the trainer worker exited (code ${code})` });
        if (this.#stopping) return;
        this.#log.error({ code, restartInMs: RESTART_DELAY_MS }, 'model trainer stopped unexpectedly');
        setTimeout(() => this.#stopping || this.#start(), RESTART_DELAY_MS).unref();
      });
    });
  }

  #onReply(reply: TrainerReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    if (reply.type === 'failed') {
      this.#settle(reply.id, pending, { status: 'failed', error: reply.error });
      return;
    }
    const stats = this.#stats.get(pending.environment);
    if (stats && reply.outcome.status === 'built') {
      const m = reply.outcome.meta;
      stats.last = { version: m.version, items: m.items, users: m.users, interactions: m.interactions, builtAt: m.builtAt, buildMs: m.buildMs, memoryBytes: m.memoryBytes, peakRssBytes: reply.peakRssBytes };
      this.#log.info({ environment: pending.environment, ...stats.last }, 'trained model built');
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
   * Builds the environment's model now (or joins the build already running for it). Resolves
   * with the outcome; never rejects: a failure is a `failed` result, and the previous model
   * keeps serving.
   */
  rebuild(environment: string): Promise<RebuildResult> {
    const config = this.#environments[environment];
    if (!config?.model.trained.enabled) return Promise.resolve({ status: 'skipped', reason: 'the trained model is disabled for this environment' });
    for (const pending of this.#pending.values()) if (pending.environment === environment) return pending.promise;
    if (this.#stopping) return Promise.resolve({ status: 'failed', error: 'the service is stopping' });
    const id = this.#nextId++;
    let resolve!: (result: RebuildResult) => void;
    const promise = new Promise<RebuildResult>((r) => (resolve = r));
    this.#pending.set(id, { environment, promise, resolve });
    this.#stats.get(environment)!.building = true;
    this.#worker.postMessage({ type: 'build', id, environment } satisfies TrainerRequest);
    return promise;
  }

  /** Stats per environment with the trained model enabled. */
  get stats(): ReadonlyMap<string, TrainerStats> {
    return this.#stats;
  }

  /** Stops scheduling and the worker; a build still running after `timeoutMs` is cut off (the next one cleans up after it). */
  async close(timeoutMs = 10_000): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#worker.postMessage({ type: 'stop' } satisfies TrainerRequest);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    if (await Promise.race([this.#exited.then(() => false), timedOut])) {
      this.#log.warn({ timeoutMs }, 'model trainer did not stop in time: terminated');
      await this.#worker.terminate();
    }
    clearTimeout(timer);
  }
}
