/**
 * @module builder/environment-model
 * Everything the model builder keeps for one environment, and how one event changes it:
 * histories, item-item co-occurrence and popularity. What it cannot use it skips and counts by
 * reason. Item indices must already exist for every action item (the worker assigns them in a
 * small transaction first). The report counters are another consumer's
 * (reports.ts), with their own position in the log.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import type { TrackedEvent } from '../domain/event.ts';
import { EVENT_TYPE_CODES } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import type { LiveRowsMemory } from '../store/live-rows.ts';
import { ConsumedSets } from './consumed-sets.ts';
import { ConsumerRecords } from './consumer-records.ts';
import { CooccurrenceState, type RowWrites } from './cooccurrence.ts';
import { eventWeight } from '../domain/event-weight.ts';
import { HistoryState } from './histories.ts';
import { PopularityState } from './popularity.ts';

export type SkipCounts = Map<string, number>;

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** Event type names by the code a history stores (store/model-layout.ts EVENT_TYPE_CODES). */
const TYPE_NAMES = new Map(Object.entries(EVENT_TYPE_CODES).map(([name, code]) => [code, name]));

/** Rows and histories kept in memory before the cache is dropped (after a flush wrote them). */
const MAX_CACHED = 200_000;

/**
 * The item type of the item an event is about, when a model can use it (its id is then the
 * event's `action_item`); an item type the environment does not have is counted in `skipped`.
 */
export function usableItemType(config: EnvironmentConfig, e: TrackedEvent, skipped: SkipCounts): string | undefined {
  if (EVENT_TYPE_CODES[e.event_type] === undefined) return undefined;
  const itemType = str(e.action_item_type);
  if (!str(e.action_item) || !itemType) return undefined;
  if (!config.itemTypes.includes(itemType)) {
    const reason = `action_item_type '${itemType}' is not an item type`;
    skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
    return undefined;
  }
  return itemType;
}

/** What the builder worker asks of one environment's state, whichever consumer of the log it is. */
export interface EventConsumer {
  /** Applies one event accepted at `t` (Unix ms); `ix` is its action item's index (undefined when it has none usable). */
  apply(t: number, e: TrackedEvent, ix: number | undefined, position?: number): void;
  /** When a flush is due without any event, Unix ms (Infinity: never). */
  readonly flushDueAt: number;
  /**
   * Encodes what changed since the last flush; the result writes it inside a transaction, with
   * the positions applied now.
   */
  prepareFlush(): () => void;
  /** The model's neighbour rows, written apart from the rest of a flush (builder/cooccurrence.ts). */
  readonly rows?: RowWrites;
  /**
   * A consumer whose state is snapshotted apart from its flushes (the report counters'): where its
   * events start, before the stored position when it replays the log to its state alone.
   */
  readonly resumeFrom?: number;
  /** Why its stored snapshot was not used (logged once; it replays the log instead). */
  readonly problem?: string | undefined;
  /** Its snapshot covering `position` when one is due (`final`: at a stop), written in a transaction of its own. */
  prepareSnapshot?(position: number, final: boolean): (() => void) | undefined;
  /**
   * A consumer that publishes between flushes (the model's neighbour rows, store/live-rows.ts):
   * `changedRows` receives the ix of the rows changed since the last publish.
   */
  publish?(changedRows: number[]): void;
  /** The last flush's commit is readable by every thread (what it wrote may be dropped from memory). */
  flushReadable?(): void;
  /**
   * Whether `apply` uses the action item's index of an event like `e` (absent: every event's);
   * the worker looks indices up only for those.
   */
  usesItemIndex?(e: TrackedEvent): boolean;
}

export class EnvironmentModel implements EventConsumer {
  readonly #config: EnvironmentConfig;
  readonly #records: ConsumerRecords;
  readonly #histories: HistoryState;
  readonly #consumed: ConsumedSets;
  readonly #cooccurrence: CooccurrenceState;
  readonly #popularity: PopularityState;
  readonly #recent: number[] = [];

  /**
   * `fresh`: nothing of this environment's state was ever written (the builder's position is 0).
   * `live`: the shared memory the ranking workers read the neighbour rows from (store/live-rows.ts).
   */
  constructor(store: Store, environment: string, config: EnvironmentConfig, fresh = false, live?: LiveRowsMemory) {
    this.#config = config;
    this.#records = new ConsumerRecords(store, environment, fresh);
    this.#histories = new HistoryState(store, environment, config.model.historyLength, this.#records, fresh);
    this.#consumed = new ConsumedSets(this.#records);
    this.#cooccurrence = new CooccurrenceState(store, environment, config.model.maxNeighbours, fresh, live);
    this.#popularity = new PopularityState(store, environment);
  }

  /**
   * Applies one event accepted at `t` (Unix ms); `ix` is its action item's index (undefined when
   * it has none usable); `position` is its place in the log (absent: after everything stored).
   */
  apply(t: number, e: TrackedEvent, ix: number | undefined, position = Infinity): void {
    this.#cooccurrence.eventPosition = position;
    const userId = str(e.user_id);
    const deviceId = str(e.device_id);
    const linkedUser = deviceId && deviceId !== 'no-consent' ? this.#histories.linkedUser(deviceId) : undefined;
    if (userId && deviceId && deviceId !== 'no-consent' && linkedUser !== userId) {
      const merged = this.#histories.link(deviceId, userId);
      if (merged) this.#pairMerged(merged);
      this.#consumed.merge(deviceId, userId);
    }
    if (ix === undefined) return;
    const unixSec = Math.floor(t / 1000);
    const weight = eventWeight(this.#config.model.eventWeights, e);
    const history = this.#histories.historyFor(userId, deviceId);
    if (weight > 0) {
      this.#popularity.add(ix, unixSec, weight);
      // Anonymous (no-consent) consumption still says what is popular, but pairs with nothing.
      if (history) {
        const recent = this.#histories.recentItems(history, this.#config.model.cooccurrenceWindow, ix, this.#recent);
        for (let i = 0; i < recent.length; i++) this.#cooccurrence.addPair(ix, recent[i]!, weight);
      }
    }
    if (history) {
      this.#histories.append(history, ix, EVENT_TYPE_CODES[e.event_type]!, unixSec);
      // The same owner as the history's: the user, else the device's linked user, else the device.
      const owner = userId ?? linkedUser;
      this.#consumed.add(owner, owner === undefined ? deviceId : undefined, ix);
    }
  }

  /**
   * Co-occurrence of a device's anonymous history with its user's, once linked: each merged
   * consumption pairs with the items before it in the merged history (up to the window, distinct)
   * that came from the other side, with its own weight, as if the device's events had been the
   * user's from the start. Pairs within one side were counted when they were consumed.
   */
  #pairMerged(merged: number[][]): void {
    const window = this.#config.model.cooccurrenceWindow;
    const weights = this.#config.model.eventWeights;
    const seen = this.#recent;
    for (let p = 1; p < merged.length; p++) {
      const [ix, code, , side] = merged[p]!;
      const weight = weights[TYPE_NAMES.get(code!) ?? ''] ?? 0;
      if (weight <= 0) continue;
      seen.length = 0;
      for (let q = p - 1; q >= 0 && seen.length < window; q--) {
        const other = merged[q]![0]!;
        if (other === ix || seen.includes(other)) continue;
        seen.push(other);
        if (merged[q]![3] !== side) this.#cooccurrence.addPair(ix!, other, weight);
      }
    }
  }

  publish(changedRows: number[]): void {
    this.#cooccurrence.publish(changedRows);
  }

  /** The flush is readable: what it wrote may be dropped from memory (the caches past their bound). */
  flushReadable(): void {
    this.#records.trim(MAX_CACHED);
    this.#histories.trim(MAX_CACHED);
    this.#cooccurrence.trim(MAX_CACHED);
  }

  /** When a flush is due without any event (the trending list's next hour), Unix ms. */
  get flushDueAt(): number {
    return this.#popularity.dueAt;
  }

  /**
   * Encodes what changed since the last flush but the neighbour rows (written apart: `rows`);
   * the result writes it inside a transaction.
   */
  prepareFlush(): () => void {
    const writes = [this.#records.prepareFlush(), this.#histories.prepareFlush(), this.#popularity.prepareFlush()];
    return () => {
      for (const write of writes) write();
    };
  }

  get rows(): RowWrites {
    return this.#cooccurrence;
  }
}
