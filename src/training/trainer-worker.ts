/**
 * @module training/trainer-worker
 * Worker entry of the model trainer: builds one environment's trained model per 'build' message
 * (training/train-model.ts), one at a time, and answers with the outcome or the error. A build is
 * seconds of CPU and synchronous LMDB writes: it must never run on the main thread (DESIGN.md
 * invariant 5), and runs here beside the model builder's worker, not in the ranking pool.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config, StoreConfig } from '../config/types.ts';
import { Store } from '../store/open.ts';
import { type BuildOutcome, buildTrainedModel } from './train-model.ts';
import { nameThread } from '../threads/thread-name.ts';
import { reportGcPauses } from '../metrics/gc-pauses.ts';

export interface TrainerWorkerData {
  store: StoreConfig;
  environments: Config['environments'];
}

export type TrainerRequest = { type: 'build'; id: number; environment: string } | { type: 'stop' };

export type TrainerReply =
  | { type: 'result'; id: number; outcome: BuildOutcome; peakRssBytes: number }
  | { type: 'failed'; id: number; error: string; peakRssBytes: number };

nameThread('aff-trainer');
reportGcPauses('trainer');
const data = workerData as TrainerWorkerData;
const store = new Store(data.store);

/** Peak resident memory of the process so far (bytes; the whole process, not only this thread). */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

parentPort!.on('message', async (message: TrainerRequest) => {
  if (message.type === 'stop') {
    void store.close().then(() => parentPort!.close());
    return;
  }
  const config = data.environments[message.environment];
  try {
    if (!config) throw new Error(`environment '${message.environment}' is not configured`);
    // A long synchronous build holds a read snapshot from its start: renew it so it sees every event.
    store.resetReadTxns();
    const outcome = buildTrainedModel(store, message.environment, config);
    // A transactionSync commit (lmdb-js overlappingSync) is not always visible to other threads'
    // new read snapshots when it returns (seen: a ranking worker read the old `current` after
    // the reply); once flushed it is. The reply, and so the rebuild's 200, waits for that.
    await store.modelRoot.flushed;
    parentPort!.postMessage({ type: 'result', id: message.id, outcome, peakRssBytes: peakRss() } satisfies TrainerReply);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    parentPort!.postMessage({ type: 'failed', id: message.id, error, peakRssBytes: peakRss() } satisfies TrainerReply);
  }
});
