/**
 * @module threads/supervised-worker
 * One worker thread the main thread keeps running, started, restarted and stopped the same way
 * for each of its kinds (the model builder's two threads, the trainer, the ingest worker): started
 * from its entry module through threads/ts-worker.mjs (which applies its niceness and scheduling
 * class, names it, and loads the built `.js` or the TypeScript source); after an unexpected exit,
 * started again RESTART_DELAY_MS later (each worker resumes from its last commit); stopped by
 * posting its stop message and waiting for its exit, terminating it after a bound (what it must
 * keep it commits before it exits, so a termination loses no acknowledged work). The ranking
 * workers are Piscina's, which starts and replaces them itself (main-thread/ranking-pool.ts).
 * Before, each kind had its own copy of this (three, with three ways of naming their entries).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

const RESTART_DELAY_MS = 1000;

/** What threads/ts-worker.mjs reads of a worker's data; the rest is the worker's own. */
export interface WorkerEntryData {
  /** The worker's entry module: the file: URL of its TypeScript source. */
  entry: string;
  /** Linux niceness of the thread (0: the process's priority). */
  niceness?: number;
  /** Whether the thread runs in the SCHED_IDLE class. */
  idle?: boolean;
}

export interface SupervisedWorkerOptions<In, Out> {
  /** What the logs call it: "model builder", "ingest worker". */
  name: string;
  workerData: WorkerEntryData;
  log: Logger;
  /** The message that asks the thread to write what it must keep and exit. */
  stopMessage: In;
  onMessage(message: Out): void;
  /** After every exit, expected or not: settle what waited for the thread. */
  onExit?(code: number): void;
  /** Added to the warning when a stop had to terminate the thread (what it means for the data). */
  terminatedNote?: string;
}

export class SupervisedWorker<In, Out> {
  readonly #options: SupervisedWorkerOptions<In, Out>;
  #worker!: Worker;
  #exited!: Promise<void>;
  #stopping = false;
  /** The thread is running (false between an unexpected exit and its restart). */
  running = false;

  constructor(options: SupervisedWorkerOptions<In, Out>) {
    this.#options = options;
    this.#start();
  }

  #start(): void {
    const { name, workerData, log, onMessage, onExit } = this.#options;
    const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData });
    this.#worker = worker;
    this.running = true;
    worker.on('message', (message: Out) => onMessage(message));
    worker.on('error', (err) => log.error({ err }, `${name} failed`));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.running = false;
        resolve();
        onExit?.(code);
        if (this.#stopping) return;
        log.error({ code, restartInMs: RESTART_DELAY_MS }, `${name} stopped unexpectedly`);
        setTimeout(() => this.#stopping || this.#start(), RESTART_DELAY_MS).unref();
      });
    });
  }

  /** A stop was asked: the thread is exiting or gone, and will not be restarted. */
  get stopping(): boolean {
    return this.#stopping;
  }

  postMessage(message: In, transfer?: ArrayBuffer[]): void {
    this.#worker.postMessage(message, transfer);
  }

  /** Posts the stop message and waits for the thread's exit; terminates it after `timeoutMs`. */
  async close(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    this.#worker.postMessage(this.#options.stopMessage);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    const terminate = await Promise.race([this.#exited.then(() => false), timedOut]);
    clearTimeout(timer);
    if (!terminate) return;
    await this.#worker.terminate();
    const { name, log, terminatedNote } = this.#options;
    log.warn({ timeoutMs }, `${name} did not stop in time: terminated${terminatedNote ? ` ${terminatedNote}` : ''}`);
  }
}
