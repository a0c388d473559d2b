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

const IMPRESSIONS = new Set(['impression', 'batch_impression', 'session_impression']);
const CLICKS = new Set(['click_on_recommendation', 'batch_click_on_recommendation', 'session_click_on_recommendation']);
const CONVERSIONS = new Set(['add_to_cart', 'purchase']);
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

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export class ReportState {
  readonly #store: Store;
  readonly #env: string;
  readonly #windowMs: number;
  /** `d` or `h`, period, dimension, value, metric → count to add. */
  readonly #counts = new Map<string, number>();
  /** Clicks not yet written, by key id: consulted before LMDB so attribution sees them at once. */
  readonly #clicks = new Map<string, [key: Key[], memory: ClickMemory]>();
  /** A/B units touched since the last flush (their whole new value). */
  readonly #units = new Map<string, [key: Key[], unit: Unit]>();
  /** day, ix → clicks to add. */
  readonly #clickedItems = new Map<string, number>();

  constructor(store: Store, env: string, attributionWindowSec: number) {
    this.#store = store;
    this.#env = env;
    this.#windowMs = attributionWindowSec * 1000;
  }

  #bump(id: string, by: number): void {
    this.#counts.set(id, (this.#counts.get(id) ?? 0) + by);
  }

  /** Adds `by` to `metric` of every dimension value `source` has, for its day and its hour. */
  #count(day: string, hour: string, source: Record<string, unknown>, metric: string, by = 1): void {
    for (const dimension of DIMENSIONS) {
      const value = str(source[dimension]);
      if (value === undefined) continue;
      this.#bump(`d${SEP}${day}${SEP}${dimension}${SEP}${value}${SEP}${metric}`, by);
      this.#bump(`h${SEP}${hour}${SEP}${dimension}${SEP}${value}${SEP}${metric}`, by);
    }
  }

  /** The unit of `who` in `group` on the day of `t`, created (and counted as a user) when new. */
  #unit(day: string, group: string, who: string): Unit {
    const key = unitKey(this.#env, day, group, who);
    const id = key.join(SEP);
    const pending = this.#units.get(id);
    if (pending) return pending[1];
    const stored = this.#store.modelState.get(key) as Unit | undefined;
    const unit: Unit = stored ? [stored[0], stored[1]] : [0, 0];
    if (!stored) this.#bump(`d${SEP}${day}${SEP}user_group${SEP}${group}${SEP}users`, 1);
    this.#units.set(id, [key, unit]);
    return unit;
  }

  #latestClick(ids: string[], itemKey: string, t: number): ClickMemory | undefined {
    let best: ClickMemory | undefined;
    for (const id of ids) {
      const key = clickKey(this.#env, id, itemKey);
      const click = this.#clicks.get(key.join(SEP))?.[1] ?? (this.#store.modelState.get(key) as ClickMemory | undefined);
      if (click && t - click.t <= this.#windowMs && t >= click.t && (!best || click.t > best.t)) best = click;
    }
    return best;
  }

  /** Counts one event accepted at `t` (ms); `ix` is its action item's index when it has one. */
  add(e: TrackedEvent, t: number, ix?: number): void {
    const type = e.event_type;
    // Once per event: every counter below is filed under the event's day and hour.
    const day = dayOf(t);
    const hour = hourOf(t);
    this.#bump(`d${SEP}${day}${SEP}event_type${SEP}${type}${SEP}events`, 1);
    this.#bump(`h${SEP}${hour}${SEP}event_type${SEP}${type}${SEP}events`, 1);
    const who = str(e.user_id) ?? str(e.device_id) ?? str(e.session_id);
    const itemKey = `${String(e.action_item_type)}${SEP}${String(e.action_item)}`;
    const group = str(e.user_group);
    if (IMPRESSIONS.has(type)) {
      this.#count(day, hour, e, 'impressions');
      if (who && group) this.#unit(day, group, who);
    } else if (CLICKS.has(type)) {
      this.#count(day, hour, e, 'clicks');
      if (who && group) this.#unit(day, group, who);
      if (ix !== undefined) {
        const id = `${day}${SEP}${ix}`;
        this.#clickedItems.set(id, (this.#clickedItems.get(id) ?? 0) + 1);
      }
      const memory: ClickMemory = { t, list_name: str(e.list_name), user_group: group, channel: str(e.channel), page_type: str(e.page_type) };
      // Under the user and the device both: a click made logged out is found by a purchase made logged in.
      // (An id named twice, a device id equal to the user id, sets the same entry twice.)
      for (const id of [str(e.user_id), str(e.device_id), str(e.session_id)]) {
        if (id === undefined || id === 'no-consent') continue;
        const key = clickKey(this.#env, id, itemKey);
        this.#clicks.set(key.join(SEP), [key, memory]);
      }
    } else if (CONVERSIONS.has(type)) {
      const ids = [str(e.user_id), str(e.device_id)].filter((x): x is string => x !== undefined && x !== 'no-consent');
      const click = this.#latestClick(ids, itemKey, t);
      if (!click) return;
      this.#count(day, hour, click, 'conversions');
      this.#count(day, hour, click, type);
      if (type !== 'purchase') return;
      const amount = typeof e.amount === 'number' ? e.amount : 1;
      const revenue = typeof e.purchased_price === 'number' ? e.purchased_price * amount : 0;
      if (revenue !== 0) this.#count(day, hour, click, 'revenue', revenue);
      if (!click.user_group || !ids[0]) return;
      const unit = this.#unit(day, click.user_group, ids[0]);
      const base = `d${SEP}${day}${SEP}user_group${SEP}${click.user_group}${SEP}`;
      this.#bump(`${base}revenue_sq`, (unit[0] + revenue) ** 2 - unit[0] ** 2);
      unit[0] += revenue;
      if (unit[1] === 0) {
        unit[1] = 1;
        this.#bump(`${base}converters`, 1);
      }
    }
  }

  /** Takes the pending counts, clicks and units; the returned function adds them to LMDB (in a transaction). */
  prepareFlush(): () => void {
    const counts = [...this.#counts];
    const clicks = [...this.#clicks.values()];
    const units = [...this.#units.values()];
    const clickedItems = [...this.#clickedItems];
    this.#counts.clear();
    this.#clicks.clear();
    this.#units.clear();
    this.#clickedItems.clear();
    const state = this.#store.modelState;
    const add = (key: Key[], n: number) => state.put(key, ((state.get(key) as number | undefined) ?? 0) + n);
    // Per period: its rollup record gets every count at once.
    const byPeriod = new Map<string, Array<[string, number]>>();
    for (const [id, n] of counts) {
      const cut = id.indexOf(SEP, 2);
      const period = id.slice(0, cut);
      let list = byPeriod.get(period);
      if (!list) byPeriod.set(period, (list = []));
      list.push([id.slice(cut + 1), n]);
    }
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
