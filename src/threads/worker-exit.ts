/**
 * @module threads/worker-exit
 * Waiting for a worker thread asked to stop (the builder's, the trainer's, the ingest worker's):
 * its exit, or after `timeoutMs` its termination. Each worker commits what it must keep before
 * it exits, and each resumes from its last commit, so a termination loses no acknowledged work.
 */
import type { Worker } from 'node:worker_threads';

/** Resolves once `exited` has, or after `timeoutMs` terminates `worker`; true when it had to terminate it. */
export async function exitedOrTerminated(worker: Worker, exited: Promise<void>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
  const terminate = await Promise.race([exited.then(() => false), timedOut]);
  clearTimeout(timer);
  if (terminate) await worker.terminate();
  return terminate;
}
