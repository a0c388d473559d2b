/**
 * @module store/report-keys
 * Keys of the reporting counters in the `model-state` database, and the UTC periods they are
 * filed under. Every key has exactly one writer, so its read-modify-write adds never race:
 * the model builder (events) or the main thread's request counter (requests, recommended
 * items, latency). The report routes only read them: a report is a range read over days, never
 * a scan of the event log.
 *
 * | key                                        | value    | writer   |
 * |--------------------------------------------|----------|----------|
 * | [env, 'repr', 'd' or 'h', period, writer]  | Rollup   | one record per day (or UTC hour `YYYY-MM-DDTHH`) and writer (`builder`, `requests`): what reports read |
 * | [env, 'repu', day, user_group, who]        | [revenue, converted 0/1] | builder: one A/B unit (a user-day) |
 * | [env, 'repi', day, 'clicked', ix]         | number   | builder: clicks per item |
 * | [env, 'repn', day]                         | u32 × ix | request counter: times each item was recommended (shown), by ix; one record per day because the main thread writes it |
 * | [env, 'repc', day]                         | bitset   | request counter: items recommended that day (coverage), a multiple of 4 bytes |
 * | [env, 'replat', 'd' or 'h', period]        | number[] | request counter: recommendation latency histogram |
 *
 * A rollup holds a whole period in one record because a report over 90 days must answer in
 * 50 ms: read one key per counter, 90 days were ~25,000 keys and ~70 ms of key decoding alone.
 * Dimensions: list_name, user_group, channel, page_type, and event_type (metric `events`, the intake).
 */
import type { Database, Key } from 'lmdb';

export const rollupKey = (env: string, granularity: 'd' | 'h', period: string, writer: 'builder' | 'requests') => [env, 'repr', granularity, period, writer];
export const unitKey = (env: string, day: string, userGroup: string, who: string) => [env, 'repu', day, userGroup, who];
export const itemCountKey = (env: string, day: string, kind: 'clicked', ix: number) => [env, 'repi', day, kind, ix];
export const recommendedCountsKey = (env: string, day: string) => [env, 'repn', day];
export const coverageKey = (env: string, day: string) => [env, 'repc', day];
export const latencyKey = (env: string, granularity: 'd' | 'h', period: string) => [env, 'replat', granularity, period];

/** A period's counters: `dimension\u0000value` → metric → count. */
export type Rollup = Record<string, Record<string, number>>;

/** Adds `counts` (`dimension\u0000value\u0000metric` → n) into the rollup record at `key`; call inside a write transaction. */
export function addToRollup(state: Database, key: Key, counts: ReadonlyArray<[id: string, n: number]>): void {
  const rollup = (state.get(key) as Rollup | undefined) ?? {};
  for (const [id, n] of counts) {
    const cut = id.lastIndexOf('\u0000');
    const row = (rollup[id.slice(0, cut)] ??= {});
    const metric = id.slice(cut + 1);
    row[metric] = (row[metric] ?? 0) + n;
  }
  state.put(key, rollup);
}

const MS_PER_DAY = 86_400_000;
const MS_PER_HOUR = 3_600_000;
let cachedDay = { start: 0, label: '1970-01-01' };
let cachedHour = { start: 0, label: '1970-01-01T00' };

/** UTC day of a time (YYYY-MM-DD); times arrive nearly in order, so the last answer is nearly always right. */
export function dayOf(unixMs: number): string {
  if (unixMs < cachedDay.start || unixMs >= cachedDay.start + MS_PER_DAY) {
    const start = unixMs - (unixMs % MS_PER_DAY);
    cachedDay = { start, label: new Date(start).toISOString().slice(0, 10) };
  }
  return cachedDay.label;
}

/** UTC hour of a time (YYYY-MM-DDTHH), cached like dayOf. */
export function hourOf(unixMs: number): string {
  if (unixMs < cachedHour.start || unixMs >= cachedHour.start + MS_PER_HOUR) {
    const start = unixMs - (unixMs % MS_PER_HOUR);
    cachedHour = { start, label: new Date(start).toISOString().slice(0, 13) };
  }
  return cachedHour.label;
}
