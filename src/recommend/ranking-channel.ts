/**
 * @module recommend/ranking-channel
 * Notices to every ranking worker from the threads that change what a ranking reads: the events
 * route (consumption it just accepted, so a detail_pageview excludes its item from the user's
 * next response), the model builder (the neighbour rows a flush rewrote, so a worker drops just
 * those from its row cache) and the trainer (a new trained model version is current, so the
 * first request after a rebuild's 200 is served by it, and no batch re-reads the version). One BroadcastChannel per sender, so no sender ever receives
 * another's notices and nothing queues up unread.
 *
 * Ranking workers block between Piscina tasks (Atomics.wait) and never run an event loop, so
 * they drain the channels with receiveMessageOnPort at the start of each batch, before renewing
 * their LMDB read snapshot: a notice posted after a commit then always comes with that commit.
 * A sender posts synchronously into every receiver's queue, so a notice posted before a task is
 * dispatched is drained by the batch that carries the task.
 */
import { BroadcastChannel, type MessagePort, receiveMessageOnPort } from 'node:worker_threads';

/**
 * Consumption accepted by the events API, flat: userId ('' when none), deviceId ('' when none or
 * no-consent), itemType, itemId, unix sec, event weight; then the next event's six.
 */
export type ConsumedEntries = Array<string | number>;
export const CONSUMED_STRIDE = 6;

export interface ConsumedNotice {
  environment: string;
  entries: ConsumedEntries;
}

export interface RowsNotice {
  environment: string;
  /** Items whose neighbour row the builder rewrote. */
  ix: Uint32Array;
}

export interface ModelNotice {
  environment: string;
}

const CONSUMED = 'affinity:ranking:consumed';
const ROWS = 'affinity:ranking:rows';
const MODEL = 'affinity:ranking:model';

const opened = new Map<string, BroadcastChannel>();

function channel(name: string): BroadcastChannel {
  let c = opened.get(name);
  if (!c) {
    c = new BroadcastChannel(name);
    // A channel keeps its thread alive: a stopping worker or process must not wait for it.
    c.unref();
    opened.set(name, c);
  }
  return c;
}

/** From the events route (main thread), after the batch is committed. */
export function postConsumed(notice: ConsumedNotice): void {
  channel(CONSUMED).postMessage(notice);
}

/** From the model builder, after the flush that rewrote the rows is committed. */
export function postRows(notice: RowsNotice): void {
  channel(ROWS).postMessage(notice);
}

/** From the trainer, after a new model version is committed as current (or a build failed). */
export function postModel(notice: ModelNotice): void {
  channel(MODEL).postMessage(notice);
}

export interface RankingNoticeHandlers {
  consumed(notice: ConsumedNotice): void;
  rows(notice: RowsNotice): void;
  model(notice: ModelNotice): void;
}

/**
 * Ranking worker side. Call once at start, before reading anything from LMDB, so no notice
 * posted after that read is missed; then drain at the start of every batch.
 */
export function openRankingChannels(): void {
  channel(CONSUMED);
  channel(ROWS);
  channel(MODEL);
}

/** The next queued message of a channel, or undefined. */
function receive(name: string): unknown {
  // Node accepts a BroadcastChannel here (worker_threads docs); @types/node types only MessagePort.
  return receiveMessageOnPort(channel(name) as unknown as MessagePort)?.message;
}

/** Hands every queued notice to its handler, oldest first. */
export function drainRankingChannels(handlers: RankingNoticeHandlers): void {
  for (let m = receive(CONSUMED); m !== undefined; m = receive(CONSUMED)) handlers.consumed(m as ConsumedNotice);
  for (let m = receive(ROWS); m !== undefined; m = receive(ROWS)) handlers.rows(m as RowsNotice);
  for (let m = receive(MODEL); m !== undefined; m = receive(MODEL)) handlers.model(m as ModelNotice);
}
