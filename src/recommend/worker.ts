/**
 * @module recommend/worker
 * A Piscina ranking worker: opens LMDB and builds the engine once, then ranks batches of
 * requests. A batch is synced with the catalog change feed once, so one thread hop and one sync
 * serve several requests. A request that fails unexpectedly fails alone (its outcome says so);
 * the others of its batch are still answered.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { Config } from '../config/types.ts';
import { Store } from '../store/open.ts';
import { Engine } from './engine.ts';
import { NoticeReader, type NoticeHandlers, type NoticeSlice } from './notices.ts';
import type { CheckOutcome, CheckTask, RankOutcome, RankTask } from './task.ts';
import { nameThread } from '../thread-name.ts';

export interface RankWorkerData {
  store: Config['store'];
  environments: Config['environments'];
}

export interface RankBatch {
  /** Epoch ms after which the main thread has answered 503: ranking the batch would be wasted. */
  deadlineAt: number;
  tasks: Array<RankTask | CheckTask>;
  /** Changes to apply first (notices.ts): the journal's entries some worker may lack. */
  notices: NoticeSlice;
}

/** A batch's answer: the outcomes in task order, and how far this worker has read the journal. */
export interface BatchReply {
  threadId: number;
  seq: number;
  outcomes: BatchOutcome[];
}

/** `expired`: the batch waited past its deadline and was not ranked (the requester answered 503). */
export type BatchOutcome = RankOutcome | CheckOutcome | { failed: string } | { expired: true };

nameThread('aff-rank');
const data = workerData as RankWorkerData;
const store = new Store(data.store);
const engine = new Engine(store, data.environments);
const reader = new NoticeReader();
const handlers: NoticeHandlers = {
  consumed: (notice) => engine.consumed(notice),
  rows: (notice) => engine.rowsChanged(notice),
  model: (notice) => engine.modelChanged(notice),
  lost: () => engine.noticesLost(),
};


export default function rankBatch({ deadlineAt, tasks, notices }: RankBatch): BatchReply {
  // lmdb-js renews its read snapshot on a timer, which a Piscina worker waiting on Atomics may
  // not reach between tasks: renew it here, or a batch could miss a write already answered 200.
  // Every notice is appended after its commit, so the renewed snapshot holds what it announces.
  store.root.resetReadTxn();
  reader.apply(notices, handlers);
  const now = Date.now();
  if (now >= deadlineAt) return reply(tasks.map(() => ({ expired: true as const })));
  engine.sync(now);
  return reply(tasks.map((task) => {
    try {
      return 'check' in task ? engine.check(task) : engine.recommend(task);
    } catch (err) {
      return { failed: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
  }));
}

function reply(outcomes: BatchOutcome[]): BatchReply {
  return { threadId, seq: reader.seq, outcomes };
}
