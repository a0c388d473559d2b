/**
 * @module store/report-keys
 * Keys of the reporting counters in the `report-state` database (the reports environment,
 * store/open.ts), and the UTC periods they are filed under. Every key has exactly one writer, so
 * its read-modify-write adds never race, and all are written on one thread, the model builder's
 * reports thread: for events (builder/reports.ts) and for the request counter's posts (requests,
 * recommended items, latency: builder/request-counts.ts). The report routes only read them: a
 * report is a range read over days, never a scan of the event log.
 *
 * | key                                        | value    | writer   |
 * |--------------------------------------------|----------|----------|
 * | [env, 'repr', 'd' or 'h', period, writer]  | Rollup   | one record per day (or UTC hour `YYYY-MM-DDTHH`) and writer (`builder`, `requests`): what reports read |
 * | [env, 'repu', day, user_group, who]        | [revenue, converted 0/1] | builder: one A/B unit (a user-day), when not in its snapshot (builder/reports.ts) |
 * | [env, 'repk', day, chunk]                  | u32 × COUNT_CHUNK_ITEMS | builder: clicks per item of the chunk |
 * | [env, 'repi', day, 'clicked', ix]         | number   | builder, before 'repk': clicks per item (still read) |
 * | [env, 'repn', day, chunk]                  | u32 × COUNT_CHUNK_ITEMS | request counter: times each item of ix chunk × COUNT_CHUNK_ITEMS on was recommended (shown) |
 * | [env, 'repc', day, chunk]                  | bitset of COVERAGE_CHUNK_ITEMS | request counter: items of the chunk recommended that day (coverage) |
 * | [env, 'replat', 'd' or 'h', period]        | number[] | request counter: recommendation latency histogram |
 *
 * The per-item records are chunks small enough to live in a leaf page, so a flush rewrites only
 * the chunks it touched, page by page. They were one record per day, by ix: at 1,000,000 items a
 * 4 MB counts array and a 125 KB bitset rewritten every second, each a run of overflow pages that
 * LMDB must find contiguous in its free list; those commits cost ~65 µs per recommendation
 * request in a libuv thread (issue 11, the 1M bench: 284 µs per request, 213 without them).
 * Such whole-day records (key without a chunk) written before are still read, at chunk 0.
 *
 * A rollup holds a whole period in one record because a report over 90 days must answer in
 * 50 ms: read one key per counter, 90 days were ~25,000 keys and ~70 ms of key decoding alone.
 * Dimensions: list_name, user_group, channel, page_type, and event_type (metric `events`, the intake).
 */
import type { Database, Key } from 'lmdb';
import { transactionSyncRetried } from './commit.ts';
import { reportsPositionKey } from './model-layout.ts';
import type { Store } from './open.ts';

export const rollupKey = (env: string, granularity: 'd' | 'h', period: string, writer: 'builder' | 'requests') => [env, 'repr', granularity, period, writer];

/** Whether an environment has day rollups of events (writer `builder`): its reports were ever written. */
export function hasEventRollups(state: Database, env: string): boolean {
  for (const key of state.getKeys({ start: [env, 'repr', 'd'], end: [env, 'repr', 'e'] })) {
    if ((key as Key[])[4] === 'builder') return true;
  }
  return false;
}
export const unitKey = (env: string, day: string, userGroup: string, who: string) => [env, 'repu', day, userGroup, who];
export const clickedCountsKey = (env: string, day: string, chunk: number) => [env, 'repk', day, chunk];
/** Items per counts chunk: 1 KB of u32, stored within a leaf page. */
export const COUNT_CHUNK_ITEMS = 256;
/** Items per coverage chunk: 1 KB of bits. */
export const COVERAGE_CHUNK_ITEMS = 8192;
export const recommendedCountsKey = (env: string, day: string, chunk: number) => [env, 'repn', day, chunk];
export const coverageKey = (env: string, day: string, chunk: number) => [env, 'repc', day, chunk];
/** The first ix a per-item record holds: its chunk's, or 0 for a whole-day record (no chunk in the key). */
export function chunkStart(key: Key, chunkItems: number): number {
  const chunk = (key as unknown[])[3];
  return typeof chunk === 'number' ? chunk * chunkItems : 0;
}
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

/** The kinds ([env, kind, ...]) of the report records: this table's, the clicks (builder/reports.ts), the snapshot (builder/report-snapshot.ts). */
const REPORT_KINDS = ['repr', 'repu', 'repk', 'repi', 'repn', 'repc', 'replat', 'repsnap', 'click'];
/** In reportState while an environment's report records are copied there but not yet removed from `model/`. */
export const reportsCopiedKey = (env: string) => [env, 'copied from model'];

/**
 * Moves an environment's report records from `model/` (where they were kept before the reports
 * environment, store/open.ts) to `reports/`: copied in one transaction there with a note, removed
 * from `model/`, then the note removed; a start that finds the note finishes the move without
 * copying again (the copies may have moved on). Range reads of the report kinds: nothing to move
 * costs a few reads. The model thread runs it at start, before the report counters' thread starts
 * (until then a report reads the records not moved yet as absent). Returns the records moved.
 */
export function moveReportRecords(store: Store, env: string): number {
  const { model, modelState, reportState, reportBlobs } = store;
  const stateKeys = REPORT_KINDS.flatMap((kind) => Array.from(modelState.getKeys({ start: [env, kind], end: [env, `${kind}\u0000`] })));
  if (modelState.get(reportsPositionKey(env)) !== undefined) stateKeys.push(reportsPositionKey(env));
  const blobKeys = Array.from(model.getKeys({ start: [env, 'repsnap'], end: [env, 'repsnap\u0000'] }));
  const copied = reportState.get(reportsCopiedKey(env)) !== undefined;
  if (stateKeys.length + blobKeys.length === 0 && !copied) return 0;
  if (!copied) {
    transactionSyncRetried(store.reportsRoot, () => {
      for (const key of stateKeys) reportState.put(key, modelState.get(key));
      for (const key of blobKeys) reportBlobs.put(key, model.getBinary(key)!);
      reportState.put(reportsCopiedKey(env), true);
    });
  }
  transactionSyncRetried(store.modelRoot, () => {
    for (const key of stateKeys) modelState.remove(key);
    for (const key of blobKeys) model.remove(key);
  });
  transactionSyncRetried(store.reportsRoot, () => {
    reportState.remove(reportsCopiedKey(env));
  });
  return stateKeys.length + blobKeys.length;
}
