/**
 * @module store/report-reader
 * Range reads of the reporting counters (store/report-keys.ts) for the report routes: counters
 * per period, dimension and value; the summed latency histogram; coverage (items recommended
 * over the range against the enabled catalog); the most recommended and most clicked items.
 * Reads only, synchronous (lmdb-js reads are), each one range read over the days asked.
 */
import { LATENCY_BUCKETS } from '../domain/latency-buckets.ts';
import { ITEM_ENABLED, ITEM_IN_CATALOG, itemLayoutKey } from './model.ts';
import type { Store } from './open.ts';

export interface CounterRow {
  /** `YYYY-MM-DD`, or `YYYY-MM-DDTHH` for hourly counters. */
  period: string;
  dimension: string;
  value: string;
  metrics: Record<string, number>;
}

/** Counter rows of the days `from`..`to` (inclusive), per day or per hour, optionally of one dimension. */
export function readCounterRows(store: Store, env: string, granularity: 'day' | 'hour', from: string, to: string, dimension?: string): CounterRow[] {
  const tag = granularity === 'day' ? 'rep' : 'reph';
  const rows = new Map<string, CounterRow>();
  for (const { key, value } of store.modelState.getRange({ start: [env, tag, from], end: [env, tag, `${to}\uffff`] })) {
    const [, , period, dim, dimValue, metric] = key as [string, string, string, string, string, string];
    if (dimension !== undefined && dim !== dimension) continue;
    const id = `${period}\u0000${dim}\u0000${dimValue}`;
    let row = rows.get(id);
    if (!row) rows.set(id, (row = { period, dimension: dim, value: dimValue, metrics: {} }));
    row.metrics[metric] = value as number;
  }
  return [...rows.values()];
}

/** The recommendation latency histogram summed over the days. */
export function readLatency(store: Store, env: string, from: string, to: string): number[] {
  const sum = new Array<number>(LATENCY_BUCKETS).fill(0);
  for (const { value } of store.modelState.getRange({ start: [env, 'replat', 'd', from], end: [env, 'replat', 'd', `${to}\uffff`] })) {
    const histogram = value as number[];
    for (let i = 0; i < sum.length; i++) sum[i]! += histogram[i] ?? 0;
  }
  return sum;
}

function popcount(byte: number): number {
  let n = 0;
  for (let b = byte; b; b &= b - 1) n++;
  return n;
}

/** Distinct items recommended over the days, and the enabled items of the catalog now. */
export function readCoverage(store: Store, env: string, from: string, to: string): { recommended: number; catalog: number } {
  let union = new Uint8Array(0);
  for (const { value } of store.modelState.getRange({ start: [env, 'repc', from], end: [env, 'repc', `${to}\uffff`] })) {
    const bits = value as Uint8Array;
    if (bits.length > union.length) {
      const grown = new Uint8Array(bits.length);
      grown.set(union);
      union = grown;
    }
    for (let i = 0; i < bits.length; i++) union[i]! |= bits[i]!;
  }
  let recommended = 0;
  for (let i = 0; i < union.length; i++) recommended += popcount(union[i]!);
  const flags = store.model.get(itemLayoutKey(env, 'flags'));
  let catalog = 0;
  const wanted = ITEM_IN_CATALOG | ITEM_ENABLED;
  if (flags) for (let i = 0; i < flags.length; i++) if ((flags[i]! & wanted) === wanted) catalog++;
  return { recommended, catalog };
}

export interface ItemCount {
  item_type: string;
  item_id: string;
  count: number;
}

/** The `limit` items most recommended or most clicked over the days, most first (ties by index). */
export function readTopItems(store: Store, env: string, kind: 'recommended' | 'clicked', from: string, to: string, limit: number): ItemCount[] {
  const counts = new Map<number, number>();
  // Keys are [env, 'repi', day, kind, ix]: one range per day keeps the other kind out.
  for (let day = from; day <= to; day = nextDay(day)) {
    for (const { key, value } of store.modelState.getRange({ start: [env, 'repi', day, kind], end: [env, 'repi', day, kind, Number.MAX_SAFE_INTEGER] })) {
      const ix = (key as [string, string, string, string, number])[4];
      counts.set(ix, (counts.get(ix) ?? 0) + (value as number));
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit)
    .flatMap(([ix, count]) => {
      const id = store.indexItems.get([env, ix]);
      return id ? [{ item_type: id[0], item_id: id[1], count }] : [];
    });
}

function nextDay(day: string): string {
  return new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
}
