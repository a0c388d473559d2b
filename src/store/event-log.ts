/**
 * @module store/event-log
 * The durable event log on LMDB. A request's batch is stored as one record: its acceptance time
 * and the validated body's JSON bytes, keyed by the sequence number of its first event, so the
 * main thread writes one small binary value per request instead of encoding every event (the
 * readers, off the hot path, parse it). Sequence numbers count events across environments, so
 * positions and counts read naturally. Batches are deduplicated by `event_id`. Validation is the
 * caller's job.
 */
import type { TrackedEvent } from '../domain/event.ts';
import type { Database } from 'lmdb';
import { signalStoreChange } from './change-signal.ts';
import type { Store } from './open.ts';
import { transactionRetried } from './commit.ts';

/** One logged event: `t` is the acceptance time (Unix ms), `e` the event as sent. */
export interface StoredEvent {
  t: number;
  e: TrackedEvent;
}

const EVENT_SEQ = 'eventSeq';
const SEQ_END = Number.MAX_SAFE_INTEGER;
const TIME_BYTES = 8;

function encodeBatch(acceptedAtMs: number, json: Buffer): Buffer {
  const out = Buffer.allocUnsafe(TIME_BYTES + json.length);
  out.writeDoubleLE(acceptedAtMs, 0);
  json.copy(out, TIME_BYTES);
  return out;
}

function decodeBatch(bytes: Uint8Array): { t: number; events: TrackedEvent[] } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const t = buf.readDoubleLE(0);
  const { events } = JSON.parse(buf.toString('utf8', TIME_BYTES)) as { events: TrackedEvent[] };
  return { t, events };
}

/** Sequence number of an environment's last logged event (0 when none), from its last batch. */
export function lastEventSeq(events: Database<Buffer>, environment: string): number {
  for (const { key, value } of events.getRange({ start: [environment, SEQ_END], end: [environment, 0], reverse: true, limit: 1 })) {
    return (key as [string, number])[1] + decodeBatch(value).events.length - 1;
  }
  return 0;
}

export class EventLog {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Appends a validated batch in one transaction; `body` is the request body it was parsed from
   * (exactly `{"events": [...]}`), stored as is when no event is a duplicate. Resolves once the
   * transaction is committed: the events then survive the death of the process (lmdb-js
   * overlappingSync: committed, fsync follows; see store/open.ts). Events whose `event_id` is
   * already logged for the environment are skipped, so a client retrying after a timeout does
   * not double-count.
   *
   * `acceptedAtMs` is for trusted import code only (the offline eval, imports of historical
   * events): it stamps the batch with the events' own time instead of now. The events API never
   * passes it, so live events are always stamped on acceptance. Imported batches must be
   * appended oldest first: the model builder takes the log's order as time order.
   */
  append(
    environment: string,
    events: readonly TrackedEvent[],
    body: Buffer,
    acceptedAtMs?: number,
  ): Promise<{ stored: number; duplicates: number }> {
    const s = this.#store;
    const committed = transactionRetried(s.root, () => {
      const first = (s.meta.get(EVENT_SEQ) ?? 0) + 1;
      let kept: TrackedEvent[] | undefined;
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!;
        const id = event.event_id;
        // Reads inside the transaction see its own writes, so repeats within the batch count too.
        if (typeof id === 'string' && s.eventIds.get([environment, id]) !== undefined) {
          kept ??= events.slice(0, i);
          continue;
        }
        if (typeof id === 'string') s.eventIds.put([environment, id], first + (kept ? kept.length : i));
        kept?.push(event);
      }
      const stored = kept ? kept.length : events.length;
      if (stored > 0) {
        const json = kept ? Buffer.from(JSON.stringify({ events: kept })) : body;
        s.events.put([environment, first], encodeBatch(acceptedAtMs ?? Date.now(), json));
        s.meta.put(EVENT_SEQ, first + stored - 1);
      }
      return { stored, duplicates: events.length - stored };
    });
    return committed.then(({ stored, duplicates }) => {
      if (stored > 0) signalStoreChange();
      return { stored, duplicates };
    });
  }

  /**
   * The seq of an environment's newest event, read from the log (the last batch's key and
   * length) at each call: /health and a metrics scrape ask, rarely. A copy kept in memory went
   * stale whenever another thread appended (a file import) and showed a lag of 0.
   */
  endOf(environment: string): number {
    return lastEventSeq(this.#store.events, environment);
  }

  /** The newest event's seq over every environment (0 when none): one counter read. */
  lastSeq(): number {
    return (this.#store.meta.get(EVENT_SEQ) as number | undefined) ?? 0;
  }

  /** Events of an environment with seq > `afterSeq`, oldest first, whole batches at a time. */
  *after(environment: string, afterSeq: number): Generator<{ seq: number; event: StoredEvent }> {
    for (const { first, t, events } of this.batchesAfter(environment, afterSeq)) {
      for (let i = Math.max(0, afterSeq + 1 - first); i < events.length; i++) yield { seq: first + i, event: { t, e: events[i]! } };
    }
  }

  /**
   * The batches holding events with seq > `afterSeq`, oldest first; the first may start before
   * afterSeq + 1 (its events up to afterSeq are the caller's to skip). For a reader that takes
   * many events at a time (the model builder): no object per event.
   */
  *batchesAfter(environment: string, afterSeq: number): Generator<{ first: number; t: number; events: TrackedEvent[] }> {
    // The batch holding afterSeq + 1 may start before it: begin at the last batch key <= afterSeq.
    let start = afterSeq + 1;
    for (const key of this.#store.events.getKeys({ start: [environment, afterSeq], end: [environment, 0], reverse: true, limit: 1 })) {
      start = (key as [string, number])[1];
    }
    for (const { key, value } of this.#store.events.getRange({ start: [environment, start], end: [environment, SEQ_END] })) {
      const { t, events } = decodeBatch(value as Uint8Array);
      yield { first: (key as [string, number])[1], t, events };
    }
  }

  /** The `limit` most recent events of an environment, newest first. */
  recent(environment: string, limit: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    const range = this.#store.events.getRange({ start: [environment, SEQ_END], end: [environment, 0], reverse: true });
    for (const { value } of range) {
      const { t, events } = decodeBatch(value as Uint8Array);
      for (let i = events.length - 1; i >= 0; i--) {
        out.push({ t, e: events[i]! });
        if (out.length === limit) return out;
      }
    }
    return out;
  }
}
