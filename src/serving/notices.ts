/**
 * @module serving/notices
 * What the ranking workers must learn from other threads, and how it reaches them: consumption
 * the events API just accepted (a detail_pageview excludes its item from the user's next
 * response), the neighbour rows a model-builder flush rewrote (a worker drops just those from its
 * row cache), and a new trained model version (the first request after a rebuild's 200 is served
 * by it, and no batch re-reads the version).
 *
 * Notices ride on the ranking batches themselves. Ranking workers block between Piscina tasks
 * and run no event loop, and a BroadcastChannel delivers through the receiver's event loop
 * (measured: a notice posted before a task was missing when the task ran 99% of the time), so
 * the main thread keeps a journal (NoticeJournal) and every batch carries the entries some
 * worker has not acknowledged yet; each worker applies those past its own position
 * (NoticeReader) and reports it back with the batch's outcomes. A worker that finds a gap (the
 * journal dropped entries it never saw, past MAX_ENTRIES) resets what notices keep fresh.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model-layout.ts';

/**
 * Consumption accepted by the events API, flat: userId ('' when none), deviceId ('' when none or
 * no-consent), itemType, itemId, unix sec, event weight; then the next event's six.
 */
export type ConsumedEntries = Array<string | number>;
export const CONSUMED_STRIDE = 6;

export type Notice =
  | { kind: 'consumed'; environment: string; entries: ConsumedEntries }
  /** Items whose neighbour row the builder rewrote. */
  | { kind: 'rows'; environment: string; ix: Uint32Array }
  /** A new trained model version is current. */
  | { kind: 'model'; environment: string };

/** What a batch carries: the notices after `fromSeq - 1`, in order (seq fromSeq, fromSeq + 1, ...). */
export interface NoticeSlice {
  fromSeq: number;
  notices: Notice[];
}

/** Entries kept for workers that lag (a stuck or restarting one); older ones are dropped. */
export const MAX_ENTRIES = 50_000;
/**
 * Values (consumed entries' fields, rows' ix) kept at most, whatever the entry count. A worker
 * acknowledges only when it runs a batch (a request, or the idle sync); while one is stuck or
 * busy, 50,000 entries of 1,000-event batches (the API's maximum) would hold 300 million values,
 * gigabytes on the main thread, and cross to the worker in one clone. 300,000 values: ~50,000
 * consumption events.
 */
export const MAX_VALUES = 300_000;

/** What an entry holds, in MAX_VALUES units. */
const valuesOf = (notice: Notice) => (notice.kind === 'consumed' ? notice.entries.length : notice.kind === 'rows' ? notice.ix.length : 1);

/** Main thread: the journal of notices not yet seen by every ranking worker. */
export class NoticeJournal {
  readonly #workers: number;
  #entries: Notice[] = [];
  /** Seq of #entries[0]. */
  #firstSeq = 1;
  /** MAX_VALUES units the entries hold. */
  #values = 0;
  /** Position acknowledged by each worker (by thread id). */
  readonly #acked = new Map<number, number>();

  /** `workers`: how many ranking workers run; entries are dropped only once each has acknowledged. */
  constructor(workers: number) {
    this.#workers = workers;
  }

  append(notice: Notice): void {
    this.#entries.push(notice);
    this.#values += valuesOf(notice);
    // Down to half at once: dropping one entry per append copied the whole journal on every
    // events 200 once it was full, as it is under an event load without recommendation batches.
    if (this.#entries.length > MAX_ENTRIES || this.#values > MAX_VALUES) {
      // Oldest first until half of each bound is left (the newest entry always stays).
      let n = 0;
      let kept = this.#values;
      while (n < this.#entries.length - 1 && (this.#entries.length - n > MAX_ENTRIES / 2 || kept > MAX_VALUES / 2)) kept -= valuesOf(this.#entries[n++]!);
      this.#drop(n);
    }
  }

  /** The entries some worker has not acknowledged (all, while a worker has not answered yet). */
  pending(): NoticeSlice {
    let from = this.#firstSeq + this.#entries.length;
    for (const seq of this.#acked.values()) if (seq + 1 < from) from = seq + 1;
    if (from < this.#firstSeq || this.#acked.size < this.#workers) from = this.#firstSeq;
    return { fromSeq: from, notices: this.#entries.slice(from - this.#firstSeq) };
  }

  /** A worker has applied everything up to `seq`; entries every known worker has are dropped. */
  acknowledge(threadId: number, seq: number): void {
    this.#acked.set(threadId, Math.max(seq, this.#acked.get(threadId) ?? 0));
    // A worker not heard from yet (starting, or replacing one) may still need every entry.
    if (this.#acked.size < this.#workers) return;
    let min = Infinity;
    for (const s of this.#acked.values()) if (s < min) min = s;
    if (min >= this.#firstSeq) this.#drop(Math.min(this.#entries.length, min - this.#firstSeq + 1));
  }

  /** A worker is gone: it no longer holds entries back. */
  forget(threadId: number): void {
    this.#acked.delete(threadId);
  }

  #drop(n: number): void {
    for (let i = 0; i < n; i++) this.#values -= valuesOf(this.#entries[i]!);
    this.#entries = this.#entries.slice(n);
    this.#firstSeq += n;
  }
}

export interface NoticeHandlers {
  consumed(notice: Extract<Notice, { kind: 'consumed' }>): void;
  rows(notice: Extract<Notice, { kind: 'rows' }>): void;
  model(notice: Extract<Notice, { kind: 'model' }>): void;
  /** Notices were lost (a gap): forget everything they keep fresh. */
  lost(): void;
}

/** Ranking worker: applies each journal entry once, in order. */
export class NoticeReader {
  /** Seq of the last entry applied. */
  seq = 0;

  apply({ fromSeq, notices }: NoticeSlice, handlers: NoticeHandlers): void {
    if (fromSeq > this.seq + 1 && this.seq > 0) handlers.lost();
    for (let i = Math.max(0, this.seq + 1 - fromSeq); i < notices.length; i++) {
      const notice = notices[i]!;
      if (notice.kind === 'consumed') handlers.consumed(notice);
      else if (notice.kind === 'rows') handlers.rows(notice);
      else handlers.model(notice);
    }
    this.seq = Math.max(this.seq, fromSeq + notices.length - 1);
  }
}

/** The consumption events of an accepted batch, flat (a `consumed` notice's entries). */
export function consumedEntries(events: readonly TrackedEvent[], weights: Readonly<Record<string, number>>, nowMs = Date.now()): ConsumedEntries {
  const out: ConsumedEntries = [];
  const nowSec = Math.floor(nowMs / 1000);
  for (const e of events) {
    if (EVENT_TYPE_CODES[e.event_type] === undefined) continue;
    const itemId = e.action_item;
    const itemType = e.action_item_type;
    if (typeof itemId !== 'string' || typeof itemType !== 'string') continue;
    const userId = typeof e.user_id === 'string' ? e.user_id : '';
    const deviceId = typeof e.device_id === 'string' && e.device_id !== 'no-consent' ? e.device_id : '';
    if (userId === '' && deviceId === '') continue;
    out.push(userId, deviceId, itemType, itemId, nowSec, weights[e.event_type] ?? 0);
  }
  return out;
}
