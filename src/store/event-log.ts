/**
 * @module store/event-log
 * The durable event log on LMDB. A request's batch is stored as one record keyed by the sequence
 * number of its first event: its acceptance time and its validated events, msgpack with the
 * database's shared structures (an event's field names are stored once per shape, not per event).
 * Until the nineteenth session a batch was the body's JSON bytes as sent, so the main thread
 * encoded nothing; but every reader parsed it again: the model builder, the report counters and
 * the trainer each spent ~1–1.8 µs an event in JSON.parse (~14% of a 1,000,000-event replay's
 * builder thread). Packed, an event costs the main thread ~0.36 µs and a reader ~0.24 µs, and
 * takes ~66 bytes instead of ~187 (the bench's mix; .scratch harness). Batches written before
 * stay in their own database (`events`) and are read first: their sequence numbers are all lower.
 * Sequence numbers count events across environments, so positions and counts read naturally.
 * Batches are deduplicated by `event_id`. Validation is the caller's job.
 */
import type { TrackedEvent } from '../domain/event.ts';
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

/** A batch as written before event-batches: 8 bytes of acceptance time, then `{"events": [...]}` as sent. */
function decodeLegacyBatch(bytes: Uint8Array): { t: number; events: TrackedEvent[] } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const t = buf.readDoubleLE(0);
  const { events } = JSON.parse(buf.toString('utf8', TIME_BYTES)) as { events: TrackedEvent[] };
  return { t, events };
}

type StoredBatch = [t: number, events: TrackedEvent[]];

/** Sequence number of an environment's last logged event (0 when none), from its last batch. */
export function lastEventSeq(store: Pick<Store, 'events' | 'eventBatches'>, environment: string): number {
  const range = { start: [environment, SEQ_END], end: [environment, 0], reverse: true, limit: 1 };
  for (const { key, value } of store.eventBatches.getRange(range)) return (key as [string, number])[1] + (value as StoredBatch)[1].length - 1;
  for (const { key, value } of store.events.getRange(range)) return (key as [string, number])[1] + decodeLegacyBatch(value).events.length - 1;
  return 0;
}

export class EventLog {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Appends a validated batch in one transaction. Resolves once the
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
  append(environment: string, events: readonly TrackedEvent[], acceptedAtMs?: number): Promise<{ stored: number; duplicates: number }> {
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
        s.eventBatches.put([environment, first], [acceptedAtMs ?? Date.now(), kept ?? events] as StoredBatch);
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
    return lastEventSeq(this.#store, environment);
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
    const { events: legacy, eventBatches } = this.#store;
    // The batch holding afterSeq + 1 may start before it: begin at the last batch key <= afterSeq,
    // in whichever database holds it (every legacy batch comes before every packed one).
    const holding = { start: [environment, afterSeq], end: [environment, 0], reverse: true, limit: 1 };
    let start = afterSeq + 1;
    let inLegacy = true;
    for (const key of eventBatches.getKeys(holding)) [start, inLegacy] = [(key as [string, number])[1], false];
    if (inLegacy) for (const key of legacy.getKeys(holding)) start = (key as [string, number])[1];
    const range = { start: [environment, start], end: [environment, SEQ_END] };
    if (inLegacy) {
      for (const { key, value } of legacy.getRange(range)) {
        const { t, events } = decodeLegacyBatch(value as Uint8Array);
        yield { first: (key as [string, number])[1], t, events };
      }
    }
    for (const { key, value } of eventBatches.getRange(range)) {
      const [t, events] = value as StoredBatch;
      yield { first: (key as [string, number])[1], t, events };
    }
  }

  /** The `limit` most recent events of an environment, newest first. */
  recent(environment: string, limit: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    const newestFirst = { start: [environment, SEQ_END], end: [environment, 0], reverse: true };
    const take = (t: number, events: TrackedEvent[]) => {
      for (let i = events.length - 1; i >= 0 && out.length < limit; i--) out.push({ t, e: events[i]! });
      return out.length === limit;
    };
    for (const { value } of this.#store.eventBatches.getRange(newestFirst)) if (take(...(value as StoredBatch))) return out;
    for (const { value } of this.#store.events.getRange(newestFirst)) {
      const { t, events } = decodeLegacyBatch(value as Uint8Array);
      if (take(t, events)) return out;
    }
    return out;
  }
}
