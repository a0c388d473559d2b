/**
 * @module serving/ranking-worker
 * A Piscina ranking worker: opens LMDB and builds the engine once, then ranks batches of
 * requests. A batch is synced with the catalog change feed once, so one thread hop and one sync
 * serve several requests. A request that fails unexpectedly fails alone (its outcome says so);
 * the others of its batch are still answered.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { LiveRowsMemory } from '../store/live-rows.ts';
import type { Config } from '../config/types.ts';
import { Store } from '../store/open.ts';
import { Engine } from './engine.ts';
import { decodeRankTask, ENGINE_BUILT, packReply, type BatchOutcome, type BatchReply, type WireTaskOrCheck } from './messages.ts';
import { NoticeReader, type NoticeHandlers, type NoticeSlice } from './notices.ts';
import { nameThread } from '../threads/thread-name.ts';
import { reportGcPauses } from '../metrics/gc-pauses.ts';

export interface RankWorkerData {
  store: Config['store'];
  environments: Config['environments'];
  /** Neighbour rows the model builder published and has not yet written to LMDB, per environment. */
  liveRows?: Record<string, LiveRowsMemory>;
}

export interface RankBatch {
  /** Epoch ms after which the main thread has answered 503: ranking the batch would be wasted. */
  deadlineAt: number;
  /** Rank tasks in their wire form (messages.ts), and checks. */
  tasks: WireTaskOrCheck[];
  /** Changes to apply first (notices.ts): the journal's entries some worker may lack. */
  notices: NoticeSlice;
}

nameThread('aff-rank');
reportGcPauses('ranking');
const data = workerData as RankWorkerData;
const store = new Store(data.store);
const engine = new Engine(store, data.environments, data.liveRows);
const reader = new NoticeReader();
const handlers: NoticeHandlers = {
  consumed: (notice) => engine.consumed(notice),
  rows: (notice) => engine.rowsChanged(notice),
  model: (notice) => engine.modelChanged(notice),
  lost: () => engine.noticesLost(),
};
parentPort!.postMessage({ [ENGINE_BUILT]: threadId });


export default function rankBatch({ deadlineAt, tasks, notices }: RankBatch): BatchReply {
  // lmdb-js renews its read snapshot on a timer, which fires when this worker's event loop next
  // turns, not necessarily before the next task: renew it here, or a batch could miss a write
  // already answered 200.
  // Every notice is appended after its commit, so the renewed snapshot holds what it announces.
  store.resetReadTxns();
  reader.apply(notices, handlers);
  const now = Date.now();
  const outcomes: BatchOutcome[] = [];
  if (now >= deadlineAt) {
    for (let i = 0; i < tasks.length; i++) outcomes.push({ expired: true });
    return packReply(threadId, reader.seq, outcomes);
  }
  engine.sync(now);
  for (const task of tasks) {
    try {
      outcomes.push(typeof task === 'string' ? engine.recommend(decodeRankTask(task, data.environments)) : engine.check(task));
    } catch (err) {
      outcomes.push({ failed: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }
  return packReply(threadId, reader.seq, outcomes);
}
