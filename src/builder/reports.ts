/**
 * @module builder/reports
 * The model builder's reporting counters (keys in store/report-keys.ts), kept incrementally so
 * a report never scans the event log: per UTC day and hour and per list_name, user_group,
 * channel and page_type, impressions and clicks of recommendations, and conversions
 * (add_to_cart, purchase, revenue) attributed to a click on the same item by the same user or
 * device within the attribution window, each conversion counted once (to the latest such
 * click). Also the intake per event type, clicks per item, and the A/B units: a user-day per
 * user group with its attributed revenue, whose sums (users, converters, revenue, revenue²)
 * are what the A/B comparison needs. Counts are summed in memory and added to the stored ones
 * at each flush (one-second rollups); the clicks and units, which no report reads, and the clicks
 * per item are kept in memory and written with a snapshot (builder/report-snapshot.ts) about once a
 * minute and at a stop. A restart loads the snapshot and applies the events after its position to
 * those alone, up to the position the counters cover (`countedUpTo`), then counts again.
 *
 * One environment's report counters are a consumer of the event log of their own, beside the
 * model's: their own worker thread and position (builder-worker.ts, role `reports`), so the
 * counters' ~1.8 µs an event (a 1,000,000-event replay took 8.1–8.4 s with them in the model's
 * thread, 6.3–6.5 s without) no longer delay the model that recommendations read, and on two
 * cores run beside it. Reports are hourly and daily sums: they may follow the log seconds later.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { addToRollup, clickedCountsKey, dayOf, hourOf, rollupKey, unitKey } from '../store/report-keys.ts';
import type { Store } from '../store/open.ts';
import type { EventConsumer } from './environment-model.ts';
import { ItemCountChunks } from './item-count-chunks.ts';
import { encodeReportSnapshot, putReportSnapshot, readReportSnapshot, type ClickEntry, type ClickMemory, type Unit, type Units } from './report-snapshot.ts';

const IMPRESSION = 1;
const CLICK = 2;
const CONVERSION = 3;
/** What the reports make of an event type (absent: counted in the intake only). */
const KINDS = new Map<string, number>([
  ['impression', IMPRESSION], ['batch_impression', IMPRESSION], ['session_impression', IMPRESSION],
  ['click_on_recommendation', CLICK], ['batch_click_on_recommendation', CLICK], ['session_click_on_recommendation', CLICK],
  ['add_to_cart', CONVERSION], ['purchase', CONVERSION],
]);
const DIMENSIONS = ['list_name', 'user_group', 'channel', 'page_type'] as const;

/** A click's record when kept one per key (written before snapshots, or spilled past MAX_CLICKS). */
const clickKey = (env: string, who: string, itemKey: string) => [env, 'click', who, itemKey];

const SEP = '\u0000';
/**
 * Clicks and units held in memory at most (each ~150 bytes); past either, a snapshot writes the
 * oldest clicks (all units) a record each and drops them down to SPILL_TO of the bound, and a miss
 * reads LMDB from then on. Clicks older than the attribution window are dropped at each snapshot.
 */
const MAX_CLICKS = 250_000;
const MAX_UNITS = 250_000;
const SPILL_TO = 0.75;
/** How often the clicks and units are snapshotted while events arrive (a restart replays at most this much of the log to them). */
const SNAPSHOT_MS = 60_000;
const DAY_MS = 86_400_000;
/**
 * Counter slots kept past a flush. Labels (list_name, channel, ...) are free-form, so the registry
 * is dropped at a flush once it holds more; a steady workload has a few hundred and keeps them.
 */
const MAX_SLOTS = 10_000;

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Counts to add to one period's rollup: by counter slot (NaN: untouched), and the slots in the order first touched. */
interface PeriodCounts {
  /** `d` or `h`, NUL, the period: what the rollup key is made of. */
  period: string;
  /** The day or hour alone. */
  label: string;
  counts: Float64Array;
  order: number[];
}

export class ReportState implements EventConsumer {
  readonly #store: Store;
  readonly #env: string;
  readonly #windowMs: number;
  /**
   * Counter slots by dimension, metric and value: an event's counters are found by map lookups on
   * the strings it carries, with no key string built per event (building and hashing
   * `d\0day\0dimension\0value\0metric` for ~10 counters an event was ~10% of the builder, issue 12).
   */
  readonly #slots = new Map<string, Map<string, Map<string, number>>>();
  /** `dimension\0value\0metric` of each slot: its name in the rollup. */
  readonly #slotIds: string[] = [];
  /** Per period, in the order first touched since the last flush (rollups keep first-seen order). */
  readonly #periods = new Map<string, PeriodCounts>();
  /** The period last asked for, per tag: every event of a day (hour) finds it without a lookup. */
  readonly #lastPeriod: Record<'d' | 'h', PeriodCounts | undefined> = { d: undefined, h: undefined };
  /** Clicks by `id\0itemKey`, oldest first (a click repeated moves to the end). */
  readonly #clicks = new Map<string, ClickEntry>();
  readonly #units: Units = new Map();
  #unitCount = 0;
  /** Units held as their stored record has them (read from it, unchanged since): dropping them writes nothing. */
  readonly #storedUnits = new WeakSet<Unit>();
  /** Whether clicks and units may be stored a record each that are not in memory: then a miss reads LMDB. */
  #mayExist: boolean;
  /** Clicks per item, by day. */
  readonly #clickedItems = new Map<string, ItemCountChunks>();
  /** Events still to apply to clicks, units and clicked items alone: the counters already hold them (a restart from a snapshot). */
  #replayLeft: number;
  /** Events whose clicks the stored clicked-item chunks already hold (a replay from before a snapshot that could not be used). */
  #clickedLeft: number;
  #newestT = 0;
  #changedSinceSnapshot = false;
  #lastSnapshotAt = Date.now();
  /** Where this state's events start in the log: the snapshot's position, or the counters' when there is none to load. */
  readonly resumeFrom: number;
  /** Why a stored snapshot was not used (the log is then replayed to the clicks and units from its start). */
  readonly problem: string | undefined;

  /**
   * `countedUpTo`: the last event the stored counters hold (the reports position; 0 when nothing
   * of this environment was ever written).
   */
  constructor(store: Store, env: string, attributionWindowSec: number, countedUpTo = 0) {
    this.#store = store;
    this.#env = env;
    this.#windowMs = attributionWindowSec * 1000;
    const { snapshot, problem, position } = countedUpTo > 0 ? readReportSnapshot(store, env) : {};
    if (snapshot && snapshot.position > countedUpTo) this.problem = `report state snapshot covers ${snapshot.position}, beyond the counters' ${countedUpTo}`;
    else this.problem = problem;
    if (snapshot && !this.problem) {
      this.resumeFrom = snapshot.position;
      this.#mayExist = snapshot.mayExist;
      this.#newestT = snapshot.newestT;
      for (const entry of snapshot.clicks) this.#clicks.set(`${entry.id}${SEP}${entry.itemKey}`, entry);
      for (const units of snapshot.units.values()) for (const byWho of units.values()) this.#unitCount += byWho.size;
      for (const [day, units] of snapshot.units) this.#units.set(day, units);
    } else {
      // A store written before snapshots holds a record per click and unit up to the counters'
      // position; after a snapshot that cannot be used, the records spilled before it may exist.
      this.#mayExist = countedUpTo > 0;
      this.resumeFrom = this.problem ? 0 : countedUpTo;
      // A first flush writes one at once: a process killed before a first snapshot would read as a store written before them.
      this.#changedSinceSnapshot = countedUpTo === 0;
      if (countedUpTo === 0) this.#lastSnapshotAt = -Infinity;
    }
    this.#replayLeft = countedUpTo - this.resumeFrom;
    // The chunks written with the snapshot that was not used cover its meta's position.
    this.#clickedLeft = this.problem && position !== undefined ? Math.max(0, position - this.resumeFrom) : 0;
  }

  #slot(dimension: string, value: string, metric: string): number {
    let byMetric = this.#slots.get(dimension);
    if (!byMetric) this.#slots.set(dimension, (byMetric = new Map()));
    let byValue = byMetric.get(metric);
    if (!byValue) byMetric.set(metric, (byValue = new Map()));
    let slot = byValue.get(value);
    if (slot === undefined) {
      slot = this.#slotIds.length;
      this.#slotIds.push(`${dimension}${SEP}${value}${SEP}${metric}`);
      byValue.set(value, slot);
    }
    return slot;
  }

  /**
   * The pending counts of a period (`tag` d or h), made when it is first touched. `label` is
   * dayOf's or hourOf's cached string, the same while the period lasts.
   */
  #period(tag: 'd' | 'h', label: string): PeriodCounts {
    const last = this.#lastPeriod[tag];
    if (last !== undefined && last.label === label) return last;
    const period = `${tag}${SEP}${label}`;
    let p = this.#periods.get(period);
    if (!p) this.#periods.set(period, (p = { period, label, counts: new Float64Array(0), order: [] }));
    return (this.#lastPeriod[tag] = p);
  }

  #bump(p: PeriodCounts, dimension: string, value: string, metric: string, by: number): void {
    this.#bumpSlot(p, this.#slot(dimension, value, metric), by);
  }

  #bumpSlot(p: PeriodCounts, slot: number, by: number): void {
    let counts = p.counts;
    if (slot >= counts.length) {
      const grown = new Float64Array(Math.max(slot + 1, 2 * counts.length, 64)).fill(NaN);
      grown.set(counts);
      p.counts = counts = grown;
    }
    const count = counts[slot]!;
    if (count !== count) {
      p.order.push(slot);
      counts[slot] = by;
    } else counts[slot] = count + by;
  }

  /** Adds `by` to `metric` of every dimension value `source` has, for its day and its hour. */
  #count(day: PeriodCounts, hour: PeriodCounts, source: Record<string, unknown>, metric: string, by = 1): void {
    for (const dimension of DIMENSIONS) {
      const value = str(source[dimension]);
      if (value === undefined) continue;
      // One lookup for both periods: the slot lookups were most of add() (issue 12 profile).
      const slot = this.#slot(dimension, value, metric);
      this.#bumpSlot(day, slot, by);
      this.#bumpSlot(hour, slot, by);
    }
  }

  /**
   * The unit of `who` in `group` on `day`, created when new (and counted as a user in `dayCounts`
   * unless the event is only replayed to the units).
   */
  #unit(dayCounts: PeriodCounts | undefined, day: string, group: string, who: string): Unit {
    let byGroup = this.#units.get(day);
    if (!byGroup) this.#units.set(day, (byGroup = new Map()));
    let byWho = byGroup.get(group);
    if (!byWho) byGroup.set(group, (byWho = new Map()));
    let unit = byWho.get(who);
    if (!unit) {
      const stored = this.#mayExist ? (this.#store.reportState.get(unitKey(this.#env, day, group, who)) as Unit | undefined) : undefined;
      unit = stored ? [stored[0], stored[1]] : [0, 0];
      if (stored) this.#storedUnits.add(unit);
      else if (dayCounts) this.#bump(dayCounts, 'user_group', group, 'users', 1);
      byWho.set(who, unit);
      this.#unitCount++;
    }
    return unit;
  }

  #latestClick(ids: string[], itemKey: string, t: number): ClickMemory | undefined {
    let best: ClickMemory | undefined;
    for (const id of ids) {
      let click = this.#clicks.get(`${id}${SEP}${itemKey}`)?.memory;
      if (!click && this.#mayExist) click = this.#store.reportState.get(clickKey(this.#env, id, itemKey)) as ClickMemory | undefined;
      if (click && t - click.t <= this.#windowMs && t >= click.t && (!best || click.t > best.t)) best = click;
    }
    return best;
  }

  /** Nothing is due without events: the counters are written with the events' flushes. */
  readonly flushDueAt = Infinity;

  /**
   * Clicks alone are counted by item index (the clicked items' chunks): a lookup by id for every
   * event was ~7% of this thread under a steady load (perf), for one event in ten.
   */
  usesItemIndex(e: TrackedEvent): boolean {
    return KINDS.get(e.event_type) === CLICK;
  }

  /** Counts one event accepted at `t` (ms); `ix` is its action item's index when it has one (clicks: usesItemIndex). */
  apply(t: number, e: TrackedEvent, ix?: number): void {
    // Replayed after a snapshot's position: to the clicks and units alone.
    const counting = this.#replayLeft === 0;
    if (!counting) this.#replayLeft--;
    const clickedCounted = this.#clickedLeft === 0;
    if (!clickedCounted) this.#clickedLeft--;
    this.#changedSinceSnapshot = true;
    if (t > this.#newestT) this.#newestT = t;
    const type = e.event_type;
    // Once per event: every counter below is filed under the event's day and hour.
    const day = dayOf(t);
    const dayCounts = counting ? this.#period('d', day) : undefined;
    const hourCounts = counting ? this.#period('h', hourOf(t)) : undefined;
    if (dayCounts && hourCounts) {
      const eventsSlot = this.#slot('event_type', type, 'events');
      this.#bumpSlot(dayCounts, eventsSlot, 1);
      this.#bumpSlot(hourCounts, eventsSlot, 1);
    }
    const kind = KINDS.get(type);
    if (kind === undefined) return;
    const who = str(e.user_id) ?? str(e.device_id) ?? str(e.session_id);
    const group = str(e.user_group);
    if (kind === IMPRESSION) {
      if (dayCounts && hourCounts) this.#count(dayCounts, hourCounts, e, 'impressions');
      if (who && group) this.#unit(dayCounts, day, group, who);
    } else if (kind === CLICK) {
      const itemKey = `${String(e.action_item_type)}${SEP}${String(e.action_item)}`;
      if (dayCounts && hourCounts) this.#count(dayCounts, hourCounts, e, 'clicks');
      if (who && group) this.#unit(dayCounts, day, group, who);
      if (ix !== undefined && clickedCounted) this.#clicked(day).add(ix, 1);
      const memory: ClickMemory = { t, list_name: str(e.list_name), user_group: group, channel: str(e.channel), page_type: str(e.page_type) };
      // Under the user and the device both: a click made logged out is found by a purchase made logged in.
      // (An id named twice, a device id equal to the user id, sets the same entry twice.)
      for (const id of [str(e.user_id), str(e.device_id), str(e.session_id)]) {
        if (id === undefined || id === 'no-consent') continue;
        const key = `${id}${SEP}${itemKey}`;
        // Deleted and set again: the map stays in the order clicks were last made, oldest first.
        this.#clicks.delete(key);
        this.#clicks.set(key, { id, itemKey, memory });
      }
    } else if (kind === CONVERSION) {
      const itemKey = `${String(e.action_item_type)}${SEP}${String(e.action_item)}`;
      const ids = [str(e.user_id), str(e.device_id)].filter((x): x is string => x !== undefined && x !== 'no-consent');
      const click = this.#latestClick(ids, itemKey, t);
      if (!click) return;
      if (dayCounts && hourCounts) {
        this.#count(dayCounts, hourCounts, click, 'conversions');
        this.#count(dayCounts, hourCounts, click, type);
      }
      if (type !== 'purchase') return;
      const amount = typeof e.amount === 'number' ? e.amount : 1;
      const revenue = typeof e.purchased_price === 'number' ? e.purchased_price * amount : 0;
      if (revenue !== 0 && dayCounts && hourCounts) this.#count(dayCounts, hourCounts, click, 'revenue', revenue);
      if (!click.user_group || !ids[0]) return;
      const unit = this.#unit(dayCounts, day, click.user_group, ids[0]);
      if (dayCounts) this.#bump(dayCounts, 'user_group', click.user_group, 'revenue_sq', (unit[0] + revenue) ** 2 - unit[0] ** 2);
      unit[0] += revenue;
      this.#storedUnits.delete(unit);
      if (unit[1] === 0) {
        unit[1] = 1;
        if (dayCounts) this.#bump(dayCounts, 'user_group', click.user_group, 'converters', 1);
      }
    }
  }

  #clicked(day: string): ItemCountChunks {
    let counts = this.#clickedItems.get(day);
    if (!counts) this.#clickedItems.set(day, (counts = new ItemCountChunks(this.#store.reportState, (chunk) => clickedCountsKey(this.#env, day, chunk))));
    return counts;
  }

  /** Takes the pending counts; the returned function adds them to LMDB (in a transaction). */
  prepareFlush(): () => void {
    // Per period: its rollup record gets every count at once.
    const byPeriod = new Map<string, Array<[string, number]>>();
    for (const { period, counts, order } of this.#periods.values()) {
      byPeriod.set(period, order.map((slot) => [this.#slotIds[slot]!, counts[slot]!]));
    }
    this.#periods.clear();
    this.#lastPeriod.d = this.#lastPeriod.h = undefined;
    // No period refers to a slot any more: the registry can start again.
    if (this.#slotIds.length > MAX_SLOTS) {
      this.#slots.clear();
      this.#slotIds.length = 0;
    }
    const state = this.#store.reportState;
    return () => {
      for (const [period, list] of byPeriod) {
        const tag = period[0] as 'd' | 'h';
        addToRollup(state, rollupKey(this.#env, tag, period.slice(2), 'builder'), list);
      }
    };
  }

  /**
   * The snapshot of the clicks and units when one is due (`final`: at a stop, whenever anything
   * changed), covering `position` (the last event applied); the returned function writes it, the
   * clicked items' chunks counted in since the last, and the records of what it drops from memory,
   * inside a transaction. Clicks past the attribution window are dropped, units of days before
   * yesterday and whatever passes the bounds written a record each.
   */
  prepareSnapshot(position: number, final: boolean): (() => void) | undefined {
    const overBound = this.#clicks.size > MAX_CLICKS || this.#unitCount > MAX_UNITS;
    if (!this.#changedSinceSnapshot || (!final && !overBound && Date.now() - this.#lastSnapshotAt < SNAPSHOT_MS)) return undefined;
    const spilledClicks: ClickEntry[] = [];
    const expired = this.#newestT - this.#windowMs;
    const keepClicks = this.#clicks.size > MAX_CLICKS ? Math.floor(MAX_CLICKS * SPILL_TO) : Infinity;
    for (const [key, entry] of this.#clicks) {
      if (entry.memory.t < expired) this.#clicks.delete(key);
      else if (this.#clicks.size > keepClicks) {
        spilledClicks.push(entry);
        this.#clicks.delete(key);
      } else break;
    }
    const spilledUnits: Array<[day: string, group: string, who: string, unit: Unit]> = [];
    const yesterday = dayOf(this.#newestT - DAY_MS);
    const spillAllUnits = this.#unitCount > MAX_UNITS;
    let droppedUnits = 0;
    for (const [day, byGroup] of this.#units) {
      if (day >= yesterday && !spillAllUnits) continue;
      for (const [group, byWho] of byGroup) {
        droppedUnits += byWho.size;
        for (const [who, unit] of byWho) if (!this.#storedUnits.has(unit)) spilledUnits.push([day, group, who, unit]);
      }
      this.#units.delete(day);
    }
    this.#unitCount -= droppedUnits;
    if (spilledClicks.length > 0 || droppedUnits > 0) this.#mayExist = true;
    const encoded = encodeReportSnapshot({ position, mayExist: this.#mayExist, newestT: this.#newestT, clicks: [...this.#clicks.values()], units: this.#units });
    this.#changedSinceSnapshot = false;
    this.#lastSnapshotAt = Date.now();
    const clickedWrites = [...this.#clickedItems.values()].map((counts) => counts.take(Infinity).write);
    // A past day is dropped once written; the newest stays, its chunks read already.
    const newestDay = [...this.#clickedItems.keys()].sort().at(-1);
    for (const day of this.#clickedItems.keys()) if (day !== newestDay) this.#clickedItems.delete(day);
    const state = this.#store.reportState;
    return () => {
      for (const write of clickedWrites) write();
      for (const { id, itemKey, memory } of spilledClicks) state.put(clickKey(this.#env, id, itemKey), memory);
      for (const [day, group, who, unit] of spilledUnits) state.put(unitKey(this.#env, day, group, who), unit);
      putReportSnapshot(this.#store, this.#env, position, encoded);
    };
  }
}
