/**
 * @module main-thread/ingest-supervisor
 * Main-thread handle of the ingest worker (feeds and file drops): starts it after clearing
 * uploads a stopped process left half-received, restarts it if it dies (imports resume from
 * their committed progress, feeds from their status), relays its log lines, asks it for a poll
 * now, nudges it when an upload arrives, and stops it before the store closes.
 */
import { SupervisedWorker, type WorkerEntryData } from '../threads/supervised-worker.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/types.ts';
import { removeInterruptedUploads } from '../store/imports.ts';
import type { Store } from '../store/open.ts';
import { clearUploads, ensureInboxes } from '../ingest/imports/inbox.ts';
import type { IngestCommand, IngestMessage, IngestWorkerData } from '../ingest/ingest-worker.ts';

/** Longest a poll request waits for the worker (a poll is bounded by fetch timeouts and retries). */
const POLL_WAIT_MARGIN_MS = 10_000;

export class IngestWorker {
  readonly #data: IngestWorkerData & WorkerEntryData;
  readonly #log: Logger;
  readonly #pending = new Map<number, (known: boolean) => void>();
  #nextId = 1;
  readonly #worker: SupervisedWorker<IngestCommand, IngestMessage>;

  private constructor(config: Config, log: Logger) {
    this.#log = log;
    this.#data = {
      entry: new URL('../ingest/ingest-worker.ts', import.meta.url).href,
      store: config.store,
      environments: config.environments,
      ingest: config.ingest,
      tickMs: 1000,
    };
    this.#worker = new SupervisedWorker<IngestCommand, IngestMessage>({
      name: 'ingest worker',
      workerData: this.#data,
      log: this.#log,
      stopMessage: 'stop',
      terminatedNote: '(imports resume from their last commit)',
      onMessage: (message) => this.#onMessage(message),
      onExit: () => {
        for (const settle of this.#pending.values()) settle(false);
        this.#pending.clear();
      },
    });
  }

  /** Prepares the inbox folders, drops half-received uploads, and starts the worker. */
  static async start(config: Config, store: Store, log: Logger): Promise<IngestWorker> {
    const environments = Object.keys(config.environments);
    ensureInboxes(config.store.dataDir, environments);
    // Before listening: no upload can be in flight, so every `receiving` record is a dead one.
    const removed = await removeInterruptedUploads(store);
    for (const environment of environments) clearUploads(config.store.dataDir, environment);
    if (removed > 0) log.warn({ removed }, 'uploads interrupted by the last stop were discarded (their clients got no 202)');
    return new IngestWorker(config, log);
  }

  /** Whether the worker thread runs (for /ready). */
  get running(): boolean {
    return this.#worker.running;
  }

  #onMessage(message: IngestMessage): void {
    if (message.type === 'log') {
      this.#log[message.level](message.fields, message.msg);
      return;
    }
    const settle = this.#pending.get(message.id);
    this.#pending.delete(message.id);
    settle?.(message.known);
  }

  /** Polls a feed now (or joins its poll in flight); resolves false when the worker does not know it. */
  pollNow(environment: string, feedId: string): Promise<boolean> {
    if (this.#worker.stopping) return Promise.resolve(false);
    const id = this.#nextId++;
    const { timeoutMs, retries, retryBaseMs } = this.#data.ingest.feeds;
    const waitMs = (timeoutMs + retryBaseMs * 2 ** retries) * (retries + 1) + POLL_WAIT_MARGIN_MS;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(true);
      }, waitMs);
      this.#pending.set(id, (known) => {
        clearTimeout(timer);
        resolve(known);
      });
      this.#worker.postMessage({ type: 'poll', id, environment, feedId });
    });
  }

  /** Tells the worker a file is waiting (it would find it at its next scan anyway). */
  nudge(): void {
    if (!this.#worker.stopping) this.#worker.postMessage('scan');
  }

  /** Stops the worker (fetches cancelled, the current import's batch committed); waits at most `timeoutMs`. */
  async close(timeoutMs = 15_000): Promise<void> {
    await this.#worker.close(timeoutMs);
  }
}
