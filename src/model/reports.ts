/**
 * @module model/reports
 * Reporting counters per UTC day and per list_name, user_group and channel: impressions and
 * clicks of recommendations, and conversions (add_to_cart, purchase) attributed to a click on
 * the same item by the same user within the attribution window. Counts are summed in memory and
 * added to the stored ones at each flush.
 */
import type { TrackedEvent } from '../domain/event.ts';
import type { Store } from '../store/open.ts';

const IMPRESSIONS = new Set(['impression', 'batch_impression', 'session_impression']);
const CLICKS = new Set(['click_on_recommendation', 'batch_click_on_recommendation', 'session_click_on_recommendation']);
const CONVERSIONS = new Set(['add_to_cart', 'purchase']);
const DIMENSIONS = ['list_name', 'user_group', 'channel'] as const;

/** What a click leaves behind for attributing a later conversion. */
interface ClickMemory {
  t: number;
  list_name?: string;
  user_group?: string;
  channel?: string;
}

export const reportKey = (env: string, day: string, dimension: string, value: string, metric: string) => [
  env,
  'rep',
  day,
  dimension,
  value,
  metric,
];
const clickKey = (env: string, who: string, itemKey: string) => [env, 'click', who, itemKey];

const MS_PER_DAY = 86_400_000;
let cachedDay = { start: 0, label: '1970-01-01' };

/** UTC day of a time (YYYY-MM-DD); times arrive nearly in order, so the last answer is nearly always right. */
export function dayOf(unixMs: number): string {
  if (unixMs < cachedDay.start || unixMs >= cachedDay.start + MS_PER_DAY) {
    const start = unixMs - (unixMs % MS_PER_DAY);
    cachedDay = { start, label: new Date(start).toISOString().slice(0, 10) };
  }
  return cachedDay.label;
}

const SEP = '\u0000';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export class ReportState {
  readonly #store: Store;
  readonly #env: string;
  readonly #windowMs: number;
  readonly #counts = new Map<string, number>();
  /** Clicks not yet written, by key id: consulted before LMDB so attribution sees them at once. */
  readonly #clicks = new Map<string, [key: string[], memory: ClickMemory]>();

  constructor(store: Store, env: string, attributionWindowSec: number) {
    this.#store = store;
    this.#env = env;
    this.#windowMs = attributionWindowSec * 1000;
  }

  #count(day: string, source: Record<string, unknown>, metric: string, by = 1): void {
    for (const dimension of DIMENSIONS) {
      const value = str(source[dimension]);
      if (value === undefined) continue;
      const id = `${day}${SEP}${dimension}${SEP}${value}${SEP}${metric}`;
      this.#counts.set(id, (this.#counts.get(id) ?? 0) + by);
    }
  }

  add(e: TrackedEvent, acceptedAtMs: number): void {
    const type = e.event_type;
    const day = dayOf(acceptedAtMs);
    const who = str(e.user_id) ?? str(e.device_id) ?? str(e.session_id);
    const itemKey = `${String(e.action_item_type)}\u0000${String(e.action_item)}`;
    if (IMPRESSIONS.has(type)) {
      this.#count(day, e, 'impressions');
    } else if (CLICKS.has(type)) {
      this.#count(day, e, 'clicks');
      if (who) {
        const memory: ClickMemory = { t: acceptedAtMs, list_name: str(e.list_name), user_group: str(e.user_group), channel: str(e.channel) };
        const key = clickKey(this.#env, who, itemKey);
        this.#clicks.set(key.join(SEP), [key, memory]);
      }
    } else if (CONVERSIONS.has(type)) {
      const candidates = [str(e.user_id), str(e.device_id)].filter((x): x is string => x !== undefined);
      for (const id of candidates) {
        const key = clickKey(this.#env, id, itemKey);
        const click =
          this.#clicks.get(key.join(SEP))?.[1] ?? (this.#store.modelState.get(key) as ClickMemory | undefined);
        if (!click || acceptedAtMs - click.t > this.#windowMs) continue;
        const source = { list_name: click.list_name, user_group: click.user_group, channel: click.channel };
        this.#count(day, source, 'conversions');
        this.#count(day, source, type);
        if (type === 'purchase' && typeof e.purchased_price === 'number') {
          const amount = typeof e.amount === 'number' ? e.amount : 1;
          this.#count(day, source, 'revenue', e.purchased_price * amount);
        }
        break;
      }
    }
  }

  /** Takes the pending counts and clicks; the returned function adds them to LMDB (in a transaction). */
  prepareFlush(): () => void {
    const counts = [...this.#counts];
    const clicks = [...this.#clicks.values()];
    this.#counts.clear();
    this.#clicks.clear();
    return () => {
      for (const [id, n] of counts) {
        const [day = '', dimension = '', value = '', metric = ''] = id.split(SEP);
        const key = reportKey(this.#env, day, dimension, value, metric);
        this.#store.modelState.put(key, ((this.#store.modelState.get(key) as number | undefined) ?? 0) + n);
      }
      for (const [key, memory] of clicks) this.#store.modelState.put(key, memory);
    };
  }
}
