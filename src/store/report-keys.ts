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
 * | [env, 'rep', day, dimension, value, metric]  | number | builder; `requests` by the request counter |
 * | [env, 'reph', hour, dimension, value, metric] | number | same, per UTC hour (`YYYY-MM-DDTHH`) |
 * | [env, 'repu', day, user_group, who]        | [revenue, converted 0/1] | builder: one A/B unit (a user-day) |
 * | [env, 'repi', day, kind, ix]               | number   | `recommended` (request counter), `clicked` (builder) per item |
 * | [env, 'repc', day]                         | bitset   | request counter: items recommended that day (coverage) |
 * | [env, 'replat', 'd' or 'h', period]        | number[] | request counter: recommendation latency histogram |
 *
 * Dimensions: list_name, user_group, channel, page_type, and event_type (metric `events`, the intake).
 */

export const reportKey = (env: string, day: string, dimension: string, value: string, metric: string) => [env, 'rep', day, dimension, value, metric];
export const hourReportKey = (env: string, hour: string, dimension: string, value: string, metric: string) => [env, 'reph', hour, dimension, value, metric];
export const unitKey = (env: string, day: string, userGroup: string, who: string) => [env, 'repu', day, userGroup, who];
export const itemCountKey = (env: string, day: string, kind: 'recommended' | 'clicked', ix: number) => [env, 'repi', day, kind, ix];
export const coverageKey = (env: string, day: string) => [env, 'repc', day];
export const latencyKey = (env: string, granularity: 'd' | 'h', period: string) => [env, 'replat', granularity, period];

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
