/**
 * @module recommend/worker
 * A Piscina ranking worker: opens LMDB and builds the engine once, then ranks batches of
 * requests. A batch is synced with the catalog change feed once, so one thread hop and one sync
 * serve several requests. A request that fails unexpectedly fails alone (its outcome says so);
 * the others of its batch are still answered.
 */
import { workerData } from 'node:worker_threads';
import type { Config } from '../config/types.ts';
import { Store } from '../store/open.ts';
import { Engine } from './engine.ts';
import { drainRankingChannels, openRankingChannels, type RankingNoticeHandlers } from './ranking-channel.ts';
import type { RankOutcome, RankTask } from './task.ts';
import { nameThread } from '../thread-name.ts';

export interface RankWorkerData {
  store: Config['store'];
  environments: Config['environments'];
}

export interface RankBatch {
  /** Epoch ms after which the main thread has answered 503: ranking the batch would be wasted. */
  deadlineAt: number;
  tasks: RankTask[];
}

/** `expired`: the batch waited past its deadline and was not ranked (the requester answered 503). */
export type BatchOutcome = RankOutcome | { failed: string } | { expired: true };

nameThread('aff-rank');
const data = workerData as RankWorkerData;
// Before the first LMDB read: every notice posted after what the engine reads is drained.
openRankingChannels();
const store = new Store(data.store);
const engine = new Engine(store, data.environments);
const handlers: RankingNoticeHandlers = {
  consumed: (notice) => engine.consumed(notice),
  rows: (notice) => engine.rowsChanged(notice),
  model: (notice) => engine.modelChanged(notice),
};


export default function rankBatch({ deadlineAt, tasks }: RankBatch): BatchOutcome[] {
  const now = Date.now();
  if (now >= deadlineAt) return tasks.map(() => ({ expired: true as const }));
  // lmdb-js renews its read snapshot on a timer, which a Piscina worker waiting on Atomics may
  // not reach between tasks: renew it here, or a batch could miss a write already answered 200.
  // Notices first, then the snapshot: a notice is posted after its commit, so the renewed
  // snapshot holds everything a drained notice announces.
  drainRankingChannels(handlers);
  store.root.resetReadTxn();
  engine.sync(now);
  return tasks.map((task) => {
    try {
      return engine.recommend(task);
    } catch (err) {
      return { failed: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
  });
}
