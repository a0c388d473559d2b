/**
 * @module store/event-log
 * The durable event log on LMDB: batches appended atomically (all events of a request or none),
 * deduplicated by `event_id`, read back in acceptance order by the model builder, the export
 * command and the recent-events endpoint. Validation is the caller's job.
 */
import type { TrackedEvent } from '../domain/event.ts';
import type { Store } from './open.ts';

/** One logged event: `t` is the acceptance time (Unix ms), `e` the event as sent. */
export interface StoredEvent {
  t: number;
  e: TrackedEvent;
}

const EVENT_SEQ = 'eventSeq';
const SEQ_END = Number.MAX_SAFE_INTEGER;

export class EventLog {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Appends a batch in one transaction. Resolves once it is committed: the events then survive
   * the death of the process (lmdb-js overlappingSync: commit, not yet fsync; see store/open.ts).
   * Events whose `event_id` is already logged for the environment are skipped, so a client that
   * retries after a timeout does not double-count.
   */
  append(environment: string, events: readonly TrackedEvent[]): Promise<{ stored: number; duplicates: number }> {
    const s = this.#store;
    return s.root.transaction(() => {
      const t = Date.now();
      let seq = s.meta.get(EVENT_SEQ) ?? 0;
      let duplicates = 0;
      for (const e of events) {
        const id = e.event_id;
        if (typeof id === 'string') {
          // Reads inside the transaction see its own writes: duplicates within the batch count too.
          if (s.eventIds.get([environment, id]) !== undefined) {
            duplicates++;
            continue;
          }
          s.eventIds.put([environment, id], seq + 1);
        }
        seq++;
        s.events.put([environment, seq], { t, e } satisfies StoredEvent);
      }
      s.meta.put(EVENT_SEQ, seq);
      return { stored: events.length - duplicates, duplicates };
    });
  }

  /** Events of an environment with seq > `afterSeq`, oldest first. */
  *after(environment: string, afterSeq: number, limit = Infinity): Generator<{ seq: number; event: StoredEvent }> {
    const range = this.#store.events.getRange({
      start: [environment, afterSeq + 1],
      end: [environment, SEQ_END],
      limit: Number.isFinite(limit) ? limit : undefined,
    });
    for (const { key, value } of range) yield { seq: (key as [string, number])[1], event: value as StoredEvent };
  }

  /** The `limit` most recent events of an environment, newest first. */
  recent(environment: string, limit: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    const range = this.#store.events.getRange({ start: [environment, SEQ_END], end: [environment, 0], reverse: true, limit });
    for (const { value } of range) out.push(value as StoredEvent);
    return out;
  }
}
