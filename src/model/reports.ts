/**
 * @module model/reports
 * The model builder's reporting counters (keys in store/report-keys.ts), kept incrementally so
 * a report never scans the event log: per UTC day and hour and per list_name, user_group,
 * channel and page_type, impressions and clicks of recommendations, and conversions
 * (add_to_cart, purchase, revenue) attributed to a click on the same item by the same user or
 * device within the attribution window, each conversion counted once (to the latest such
 * click). Also the intake per event type, clicks per item, and the A/B units: a user-day per
 * user group with its attributed revenue, whose sums (users, converters, revenue, revenue²)
 * are what the A/B comparison needs. Counts are summed in memory and added to the stored ones
 * at each flush; the builder calls add() and prepareFlush() only.
 */
import type { TrackedEvent } from '../domain/event.ts';
import { addToRollup, dayOf, hourOf, itemCountKey, rollupKey, unitKey } from '../store/report-keys.ts';
import type { Key } from 'lmdb';
import type { Store } from '../store/open.ts';

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

/** What a click leaves behind for attributing a later conversion. */
type ClickMemory = {
  t: number;
  list_name?: string | undefined;
  user_group?: string | undefined;
  channel?: string | undefined;
  page_type?: string | undefined;
};

/** An A/B unit (one user on one day in one group): attributed revenue and whether it purchased. */
type Unit = [revenue: number, converted: 0 | 1];

const clickKey = (env: string, who: string, itemKey: string) => [env, 'click', who, itemKey];

const SEP = '\u0000';
/**
 * Clicks and A/B units kept in memory after they are written (each up to ~100 bytes), so a
 * conversion or an impression finds them without a read; past this many the cache is dropped and
 * reads resume. A fresh start's state is all in this cache until then, so a miss needs no read
 * (misses for keys never written were ~4% of a replay, issue 12).
 */
const MAX_CACHED = 500_000;
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

export class ReportState {
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
  /** Clicks known (written or not), by who then item: consulted before LMDB so attribution sees them at once. */
  readonly #clicks = new Map<string, Map<string, ClickMemory>>();
  #cachedClicks = 0;
  /** Clicks to write at the next flush, by who then item: a click repeated before it is written once, with its latest memory. */
  readonly #newClicks = new Map<string, Set<string>>();
  /** A/B units known, by day, group and who. */
  readonly #units = new Map<string, Map<string, Map<string, Unit>>>();
  #cachedUnits = 0;
  /** Units new or changed since the last flush (their whole new value is written). */
  readonly #touchedUnits = new Map<Unit, Key[]>();
  /** Whether clicks and units may be stored that are not cached: false from a fresh start until the cache is dropped. */
  #mayExist: boolean;
  /** day, ix → clicks to add. */
  readonly #clickedItems = new Map<string, number>();

  /** `fresh`: nothing of this environment was ever written (the builder's position is 0). */
  constructor(store: Store, env: string, attributionWindowSec: number, fresh = false) {
    this.#store = store;
    this.#env = env;
    this.#windowMs = attributionWindowSec * 1000;
    this.#mayExist = !fresh;
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
   * The unit of `who` in `group` on the day of `t`, created (and counted as a user) when new. It is
   * written at the next flush when new or when `changing` (a conversion is added to it): an
   * impression of a known unit rewrote the same value, ~40,000 puts a flush in a 1M replay.
   */
  #unit(dayCounts: PeriodCounts, day: string, group: string, who: string, changing: boolean): Unit {
    let byGroup = this.#units.get(day);
    if (!byGroup) this.#units.set(day, (byGroup = new Map()));
    let byWho = byGroup.get(group);
    if (!byWho) byGroup.set(group, (byWho = new Map()));
    let unit = byWho.get(who);
    let write = changing;
    if (!unit) {
      const stored = this.#mayExist ? (this.#store.modelState.get(unitKey(this.#env, day, group, who)) as Unit | undefined) : undefined;
      unit = stored ? [stored[0], stored[1]] : [0, 0];
      if (!stored) {
        this.#bump(dayCounts, 'user_group', group, 'users', 1);
        write = true;
      }
      byWho.set(who, unit);
      this.#cachedUnits++;
    }
    if (write && !this.#touchedUnits.has(unit)) this.#touchedUnits.set(unit, unitKey(this.#env, day, group, who));
    return unit;
  }

  #latestClick(ids: string[], itemKey: string, t: number): ClickMemory | undefined {
    let best: ClickMemory | undefined;
    for (const id of ids) {
      let click = this.#clicks.get(id)?.get(itemKey);
      if (!click && this.#mayExist) click = this.#store.modelState.get(clickKey(this.#env, id, itemKey)) as ClickMemory | undefined;
      if (click && t - click.t <= this.#windowMs && t >= click.t && (!best || click.t > best.t)) best = click;
    }
    return best;
  }

  /** Counts one event accepted at `t` (ms); `ix` is its action item's index when it has one. */
  add(e: TrackedEvent, t: number, ix?: number): void {
    const type = e.event_type;
    // Once per event: every counter below is filed under the event's day and hour.
    const day = dayOf(t);
    const dayCounts = this.#period('d', day);
    const hourCounts = this.#period('h', hourOf(t));
    const eventsSlot = this.#slot('event_type', type, 'events');
    this.#bumpSlot(dayCounts, eventsSlot, 1);
    this.#bumpSlot(hourCounts, eventsSlot, 1);
    const kind = KINDS.get(type);
    if (kind === undefined) return;
    const who = str(e.user_id) ?? str(e.device_id) ?? str(e.session_id);
    const group = str(e.user_group);
    if (kind === IMPRESSION) {
      this.#count(dayCounts, hourCounts, e, 'impressions');
      if (who && group) this.#unit(dayCounts, day, group, who, false);
    } else if (kind === CLICK) {
      const itemKey = `${String(e.action_item_type)}${SEP}${String(e.action_item)}`;
      this.#count(dayCounts, hourCounts, e, 'clicks');
      if (who && group) this.#unit(dayCounts, day, group, who, false);
      if (ix !== undefined) {
        const id = `${day}${SEP}${ix}`;
        this.#clickedItems.set(id, (this.#clickedItems.get(id) ?? 0) + 1);
      }
      const memory: ClickMemory = { t, list_name: str(e.list_name), user_group: group, channel: str(e.channel), page_type: str(e.page_type) };
      // Under the user and the device both: a click made logged out is found by a purchase made logged in.
      // (An id named twice, a device id equal to the user id, sets the same entry twice.)
      for (const id of [str(e.user_id), str(e.device_id), str(e.session_id)]) {
        if (id === undefined || id === 'no-consent') continue;
        let byItem = this.#clicks.get(id);
        if (!byItem) this.#clicks.set(id, (byItem = new Map()));
        if (!byItem.has(itemKey)) this.#cachedClicks++;
        byItem.set(itemKey, memory);
        let items = this.#newClicks.get(id);
        if (!items) this.#newClicks.set(id, (items = new Set()));
        items.add(itemKey);
      }
    } else if (kind === CONVERSION) {
      const itemKey = `${String(e.action_item_type)}${SEP}${String(e.action_item)}`;
      const ids = [str(e.user_id), str(e.device_id)].filter((x): x is string => x !== undefined && x !== 'no-consent');
      const click = this.#latestClick(ids, itemKey, t);
      if (!click) return;
      this.#count(dayCounts, hourCounts, click, 'conversions');
      this.#count(dayCounts, hourCounts, click, type);
      if (type !== 'purchase') return;
      const amount = typeof e.amount === 'number' ? e.amount : 1;
      const revenue = typeof e.purchased_price === 'number' ? e.purchased_price * amount : 0;
      if (revenue !== 0) this.#count(dayCounts, hourCounts, click, 'revenue', revenue);
      if (!click.user_group || !ids[0]) return;
      const unit = this.#unit(dayCounts, day, click.user_group, ids[0], true);
      this.#bump(dayCounts, 'user_group', click.user_group, 'revenue_sq', (unit[0] + revenue) ** 2 - unit[0] ** 2);
      unit[0] += revenue;
      if (unit[1] === 0) {
        unit[1] = 1;
        this.#bump(dayCounts, 'user_group', click.user_group, 'converters', 1);
      }
    }
  }

  /** Takes the pending counts, clicks and units; the returned function adds them to LMDB (in a transaction). */
  prepareFlush(): () => void {
    // Per period: its rollup record gets every count at once.
    const byPeriod = new Map<string, Array<[string, number]>>();
    for (const { period, counts, order } of this.#periods.values()) {
      byPeriod.set(period, order.map((slot) => [this.#slotIds[slot]!, counts[slot]!]));
    }
    // Each click's latest memory (the cache holds every click not yet written).
    const clicks: Array<[Key[], ClickMemory]> = [];
    for (const [id, items] of this.#newClicks) {
      const byItem = this.#clicks.get(id)!;
      for (const itemKey of items) clicks.push([clickKey(this.#env, id, itemKey), byItem.get(itemKey)!]);
    }
    // Copies: a unit keeps changing in memory while the write waits for the transaction.
    const units = [...this.#touchedUnits].map(([unit, key]): [Key[], Unit] => [key, [unit[0], unit[1]]]);
    const clickedItems = [...this.#clickedItems];
    this.#periods.clear();
    this.#lastPeriod.d = this.#lastPeriod.h = undefined;
    // No period refers to a slot any more: the registry can start again.
    if (this.#slotIds.length > MAX_SLOTS) {
      this.#slots.clear();
      this.#slotIds.length = 0;
    }
    this.#newClicks.clear();
    this.#touchedUnits.clear();
    this.#clickedItems.clear();
    if (this.#cachedClicks + this.#cachedUnits > MAX_CACHED) {
      this.#clicks.clear();
      this.#units.clear();
      this.#cachedClicks = this.#cachedUnits = 0;
      this.#mayExist = true;
    }
    const state = this.#store.modelState;
    const add = (key: Key[], n: number) => state.put(key, ((state.get(key) as number | undefined) ?? 0) + n);
    return () => {
      for (const [period, list] of byPeriod) {
        const tag = period[0] as 'd' | 'h';
        addToRollup(state, rollupKey(this.#env, tag, period.slice(2), 'builder'), list);
      }
      for (const [id, n] of clickedItems) {
        const [day = '', ix = ''] = id.split(SEP);
        add(itemCountKey(this.#env, day, 'clicked', Number(ix)), n);
      }
      for (const [key, memory] of clicks) state.put(key, memory);
      for (const [key, unit] of units) state.put(key, unit);
    };
  }
}
